import { join } from 'node:path';
import { packageRoot } from '../../../common/package-root.js';
import { buildOpenApiDocument } from './document.js';
import { MANAGEMENT_OPERATIONS } from './management-operations.js';

/** Where the document is committed; `npm run openapi` rewrites it, a test checks it. */
export const COMMITTED_DOCUMENT = join(packageRoot(), 'docs', 'openapi.json');

/** The document as committed: two-space JSON and a final newline. */
export function documentText(): string {
  return `${JSON.stringify(buildOpenApiDocument(MANAGEMENT_OPERATIONS), null, 2)}\n`;
}
