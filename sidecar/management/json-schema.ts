import { z } from 'zod';

/** A JSON Schema object as it appears in the document. */
export type JsonSchema = Record<string, unknown>;

const COMPONENT_REF = '#/components/schemas/';

/**
 * One zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect). Schemas given an `id` with
 * `.meta({ id })` become shared components: they are added to `components` and referenced.
 * `io`: requests are described as they are sent (input), answers as they are sent back (output).
 */
export function toJsonSchema(
  schema: z.ZodType,
  io: 'input' | 'output',
  components: Record<string, JsonSchema>,
): JsonSchema {
  const converted = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    // What JSON Schema cannot say at all (a transform's result, a Date) stops the build rather
    // than being documented wrong. Refinements (clean text) are left out: the document then
    // describes a little more than is accepted, never less.
    unrepresentable: 'throw',
  }) as JsonSchema & { $defs?: Record<string, JsonSchema> };
  const { $schema: _dialect, $defs, ...root } = converted;
  for (const [id, def] of Object.entries($defs ?? {})) {
    const linked = relink(def) as JsonSchema;
    // One name, one schema: a component read differently as input and output needs two ids.
    if (components[id] && JSON.stringify(components[id]) !== JSON.stringify(linked)) {
      throw new Error(`schema ${id} differs as request and as response; give each its own id`);
    }
    components[id] = linked;
  }
  return relink(root) as JsonSchema;
}

/** zod points at its `$defs`; in the document they live under components/schemas. */
function relink(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(relink);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) {
    out[key] =
      key === '$ref' && typeof child === 'string' && child.startsWith('#/$defs/')
        ? COMPONENT_REF + child.slice('#/$defs/'.length)
        : relink(child);
  }
  return out;
}
