import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { packageRoot } from '../../common/package-root.js';
import type { HttpResponse } from './http.js';

type Json = Record<string, unknown>;

/** The committed OpenAPI document (docs/openapi.json). */
export function committedDocument(): Json {
  return JSON.parse(readFileSync(join(packageRoot(), 'docs', 'openapi.json'), 'utf8')) as Json;
}

/**
 * Checks real answers against the document: the status must be documented for the operation,
 * and a JSON body must match the documented schema (JSON Schema 2020-12, formats checked).
 * Records which (operation, status) pairs were seen, so a test can ask what was never shown.
 */
export class DocumentedResponses {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  readonly seen = new Set<string>();

  constructor(private readonly doc: Json) {
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.ajv);
    this.ajv.addSchema(doc, 'openapi.json');
  }

  /** Every `operationId status` the document promises. */
  documented(): string[] {
    const out: string[] = [];
    for (const item of Object.values(this.doc.paths as Record<string, Json>)) {
      for (const op of Object.values(item) as Json[]) {
        for (const status of Object.keys(op.responses as Json)) {
          out.push(`${op.operationId} ${status}`);
        }
      }
    }
    return out.sort();
  }

  /** Throws unless `res` is a documented answer of `method path` (path in template form). */
  check(method: string, path: string, res: HttpResponse): void {
    const pointer = ['paths', path, method.toLowerCase()];
    const op = this.at(pointer);
    if (!op) throw new Error(`${method} ${path} is not in the document`);
    const responses = op.responses as Record<string, Json>;
    let response = responses[String(res.status)];
    if (!response) {
      throw new Error(`${method} ${path} answered ${res.status}, not documented: ${res.text}`);
    }
    this.seen.add(`${op.operationId} ${res.status}`);
    let responsePointer = [...pointer, 'responses', String(res.status)];
    if (typeof response.$ref === 'string') {
      responsePointer = response.$ref.slice(2).split('/');
      response = this.at(responsePointer)!;
    }
    const content = response.content as Record<string, Json> | undefined;
    if (!content) {
      if (res.text !== '')
        throw new Error(`${method} ${path} ${res.status}: a body, none documented`);
      return;
    }
    const type = String(res.headers['content-type'] ?? '');
    if (!/^application\/json(;|$)/.test(type)) {
      throw new Error(`${method} ${path} ${res.status}: Content-Type ${type}, JSON documented`);
    }
    const ref = `openapi.json#/${[...responsePointer, 'content', 'application/json', 'schema'].map(pointerSegment).join('/')}`;
    const validate = this.ajv.getSchema(ref) ?? this.ajv.compile({ $ref: ref });
    if (!validate(res.json)) {
      throw new Error(
        `${method} ${path} ${res.status} does not match the document: ${this.ajv.errorsText(validate.errors)}\n${res.text.slice(0, 500)}`,
      );
    }
  }

  private at(pointer: string[]): Json | undefined {
    let node: unknown = this.doc;
    for (const part of pointer) node = (node as Json | undefined)?.[part];
    return node as Json | undefined;
  }
}

/** A JSON Pointer segment (RFC 6901). */
function pointerSegment(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
