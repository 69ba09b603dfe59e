/**
 * A client's permissions as one line of text, wherever nginx holds them.
 */

import { ALLOWED_METHODS } from './request.js';

/**
 * A client's permissions as nginx holds them: one line of ASCII, the same in the /auth
 * answer's header, the decision cache, the key records and the key table's record. `<n>`, the
 * number of rules, then per rule a space, its methods as two lowercase hex digits (the sum of
 * `methodBits`, HEAD's bit set wherever GET's is), and its pattern with every byte beyond ASCII
 * written `%XX` (a pattern never holds `%` or a space itself). `0`: no rule, nothing allowed.
 * Written by common/permissions.ts's permissionsText, read by lua/gateway/permissions.lua.
 */
export const PERMISSIONS_TEXT = {
  methodBits: Object.fromEntries(ALLOWED_METHODS.map((m, i) => [m, 1 << i])) as Readonly<
    Record<string, number>
  >,
} as const;
