import { Router } from 'express';
import { closePaths, mount } from '../http/route-table.js';
import {
  buildOpenApiDocument,
  MANAGEMENT_OPERATIONS,
  OPENAPI_OPERATIONS as OPS,
} from './openapi-document.js';

/** Serves the OpenAPI document of the management API; admin-only like every route beside it. */
export function openApiRouter(): Router {
  // Built once: it depends only on the code.
  const text = JSON.stringify(buildOpenApiDocument(MANAGEMENT_OPERATIONS));
  const router = Router({ strict: false });
  mount(router, OPS.read, (_req, res) => {
    res.type('application/json; charset=utf-8').send(text);
  });
  closePaths(router, Object.values(OPS));
  return router;
}
