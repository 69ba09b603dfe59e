import type { RequestHandler, Router } from 'express';
import { jsonBody } from './json-body.js';
import { allowOnly } from './middleware.js';
import { expressPath, type Operation } from './operation.js';

/** Mounts a declared operation's handlers; a body-taking one reads its JSON body first. */
export function mount(router: Router, op: Operation, ...handlers: RequestHandler[]): void {
  const path = expressPath(op.path);
  if (op.body) router[op.method](path, jsonBody, ...handlers);
  else router[op.method](path, ...handlers);
}

const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'];

/** The methods a path serves, as `Allow` lists them: a GET route answers HEAD too. */
export function allowedMethods(operations: readonly Operation[], path: string): string[] {
  const methods = new Set<string>();
  for (const op of operations) {
    if (op.path !== path) continue;
    methods.add(op.method.toUpperCase());
    if (op.method === 'get') methods.add('HEAD');
  }
  return METHOD_ORDER.filter((m) => methods.has(m));
}

/** After the operations of `paths`: any other method there is a 405 with `Allow`. */
export function closePaths(router: Router, operations: readonly Operation[]): void {
  for (const path of new Set(operations.map((op) => op.path))) {
    router.all(expressPath(path), allowOnly(allowedMethods(operations, path)));
  }
}
