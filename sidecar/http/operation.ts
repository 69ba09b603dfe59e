import type { z } from 'zod';

/** The error statuses a route answers, each with the one error shape (errors/error-schema.ts). */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 503;

/** A documented success answer. */
export interface SuccessResponse {
  description: string;
  /** The JSON body; absent: no body. */
  schema?: z.ZodType;
}

/**
 * One management route, declared once: Express mounts its handlers on `method` and `path`
 * (route-table.ts) and the OpenAPI document is built from the same object, so neither can
 * name a route the other does not have. A `get` also answers HEAD (Express does), and the
 * document says so.
 */
export interface Operation {
  method: 'get' | 'post' | 'put' | 'delete';
  /** OpenAPI template form: `/v1/management/api-clients/{id}`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  /** Path parameters; the keys are the template's `{names}`. */
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** A JSON request body (Content-Type: application/json, at most 64 KiB). */
  body?: z.ZodType;
  success: Record<number, SuccessResponse>;
  /**
   * The error statuses the route itself answers; 401, 403 and 503 (the admin check) come with
   * every route, and 400, 413 and 415 with every body, without being listed.
   */
  errors: ErrorStatus[];
}

/** Every route under /v1/management may answer these: the admin check runs first. */
export const ADMIN_ERRORS: ErrorStatus[] = [401, 403, 503];

/** `/v1/a/{id}` → `/v1/a/:id`, the Express form of a path template. */
export function expressPath(path: string): string {
  return path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
}
