import { AUDIT_OPERATIONS } from '../../audit/audit-operations.js';
import { USAGE_OPERATIONS } from '../../usage/usage-operations.js';
import { API_CLIENT_OPERATIONS } from '../api-clients-operations.js';
import { SETTINGS_OPERATIONS } from '../settings-operations.js';
import { OPENAPI_OPERATIONS } from './openapi-operations.js';
import type { Operation } from './operation.js';

/** Every management route, in the document's order: a new route group is added here. */
export const MANAGEMENT_OPERATIONS: readonly Operation[] = [
  ...Object.values(API_CLIENT_OPERATIONS),
  ...Object.values(USAGE_OPERATIONS),
  ...Object.values(AUDIT_OPERATIONS),
  ...Object.values(SETTINGS_OPERATIONS),
  ...Object.values(OPENAPI_OPERATIONS),
];
