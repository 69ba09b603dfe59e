import { DELPHIX_NAMESPACE, SERVICE_NAMESPACE } from '../http/namespace-alias.js';
import type { RouteSpec } from '../http/route.js';
import {
  describeVersions,
  type FieldDef,
  type FieldType,
  type RecordDef,
} from '../schema/fields.js';
import { RECORDS } from '../schema/records.js';
import type { EngineSettings } from '../state.js';
import { formatVersion } from '../versions.js';
import { knownRanges } from './versions-known.js';

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** `/resources/json/service/user/:name` as readers expect it: `.../user/{name}`. */
export function displayPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function recordLink(type: string): string {
  return RECORDS.has(type) ? `<a href="#record-${esc(type)}">${esc(type)}</a>` : esc(type);
}

function typeText(type: FieldType): string {
  switch (type.kind) {
    case 'string': {
      const length = `${type.minLength ?? 0}–${type.maxLength} characters`;
      return `string, ${length}${type.hint ? `, ${esc(type.hint)}` : ''}`;
    }
    case 'integer':
      return `integer ${type.min}–${type.max}`;
    case 'enum':
      return `one of ${type.values.map((v) => `<code>${esc(v)}</code>`).join(', ')}`;
    case 'record':
      return recordLink(type.record);
    case 'list':
      return `list of ${recordLink(type.of)}`;
    case 'timestamp':
      return 'ISO 8601 timestamp';
    case 'any':
      return 'any JSON value';
    default:
      return type.kind;
  }
}

function fieldRows(fields: readonly FieldDef[], natives: EngineSettings['versions']): string {
  return fields
    .map((f) => {
      const dflt = f.default === undefined ? '' : `<code>${esc(JSON.stringify(f.default))}</code>`;
      const flags = [
        f.direction === 'both' ? 'in, out' : f.direction,
        f.required ? 'required on create' : '',
        f.nullable ? 'nullable' : '',
      ]
        .filter(Boolean)
        .join('; ');
      return `<tr class="field" data-field="${esc(f.name)}"><td><code>${esc(f.name)}</code></td><td>${typeText(f.type)}</td><td>${esc(flags)}</td><td>${dflt}</td><td>${esc(describeVersions(f))}<br>here: ${esc(knownRanges(f, natives))}</td><td>${esc(f.description)}</td></tr>`;
    })
    .join('\n');
}

const FIELD_HEAD =
  '<tr><th>Field</th><th>Type</th><th>Use</th><th>Default</th><th>Versions</th><th>Meaning</th></tr>';

function anchor(route: RouteSpec): string {
  return `route-${route.method}${displayPath(route.path)}`;
}

function routeSection(route: RouteSpec, natives: EngineSettings['versions']): string {
  const path = displayPath(route.path);
  const query = route.query?.length
    ? `<h4>Query parameters</h4><table>${FIELD_HEAD}${fieldRows(route.query, natives)}</table>`
    : '';
  const body = route.body
    ? `<p>Body: JSON ${recordLink(route.body.record.type)} (${route.body.mode === 'create' ? 'absent fields get their defaults' : 'only the fields sent change'}).</p>`
    : '<p>Body: none.</p>';
  return `<section class="route" id="${esc(anchor(route))}" data-method="${route.method}" data-path="${esc(path)}">
<h3><code>${route.method} ${esc(path)}</code></h3>
<p>${esc(route.summary)}</p>
<p>Access: ${esc(route.access)}${route.probe ? ' (a probe: session refusals answer HTTP 200)' : ''}. Result: ${route.result === 'HTML' ? 'HTML page' : recordLink(route.result)}.</p>
${query}${body}
</section>`;
}

function recordSection(record: RecordDef, natives: EngineSettings['versions']): string {
  return `<section class="record" id="record-${esc(record.type)}">
<h3>${esc(record.type)}</h3>
<p>${esc(record.description)}</p>
<table>${FIELD_HEAD}
<tr class="field" data-field="type"><td><code>type</code></td><td>literal <code>${esc(record.type)}</code></td><td>in, out; required</td><td></td><td>all versions</td><td>Record type.</td></tr>
${fieldRows(record.fields, natives)}</table>
</section>`;
}

/** The human-readable API reference, generated from the route table and the record catalogue. */
export function renderReference(routes: readonly RouteSpec[], settings: EngineSettings): string {
  const natives = settings.versions;
  const summary = routes
    .map(
      (r) =>
        `<tr><td><code>${r.method}</code></td><td><a href="#${esc(anchor(r))}"><code>${esc(displayPath(r.path))}</code></a></td><td>${esc(r.access)}</td></tr>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Data engine API reference</title>
<style>body{font-family:sans-serif;max-width:72rem;margin:auto;padding:1rem}table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ccc;padding:.25rem .5rem;text-align:left;vertical-align:top}</style>
</head><body>
<h1>Data engine API reference</h1>
<p>Supported API versions (native version of each major): ${natives.map((v) => `<code>${formatVersion(v)}</code>`).join(', ')}.
A session opened at an older minor of a supported major sees only the fields that minor knew; fields it does not know get their defaults when objects are created.</p>
<p>Every call answers JSON: <code>{"type":"OKResult","status":"OK","result":…,"job":null,"action":null}</code>, or on failure <code>{"type":"ErrorResult","status":"ERROR","error":{"type":"APIError","id":…,"details":…,"action":…,"commandOutput":null,"diagnoses":[…]}}</code>.
GET takes query parameters only; POST takes a JSON body; every DELETE can also be sent as POST to the same URL with <code>/delete</code> appended.
Success is always HTTP 200 with an <code>OKResult</code>.
Every call under <code>${esc(SERVICE_NAMESPACE)}</code> is also served under <code>${esc(DELPHIX_NAMESPACE)}</code>, where Delphix clients send it.
Access: <code>none</code> needs no session, <code>login</code> any session, <code>user</code> a logged-in session, <code>admin</code> a logged-in administrator.</p>
<h2>Calls</h2>
<table><tr><th>Method</th><th>Path</th><th>Access</th></tr>
${summary}
</table>
${routes.map((r) => routeSection(r, natives)).join('\n')}
<h2>Records</h2>
${[...RECORDS.values()].map((r) => recordSection(r, natives)).join('\n')}
</body></html>
`;
}
