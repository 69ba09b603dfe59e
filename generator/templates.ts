import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Handlebars from 'handlebars';
import { packageRoot } from '../common/package-root.js';

const compiled = new Map<string, Handlebars.TemplateDelegate>();

/**
 * Renders `templates/<name>` with a model. Templates only loop and branch: values arrive as
 * finished nginx literals, so HTML escaping is off, and strict mode turns a field missing
 * from the model into an error instead of an empty directive.
 */
export function renderTemplate(name: string, model: object): string {
  let template = compiled.get(name);
  if (template === undefined) {
    const source = readFileSync(join(packageRoot(), 'templates', name), 'utf8');
    template = Handlebars.create().compile(source, { noEscape: true, strict: true });
    compiled.set(name, template);
  }
  return template(model);
}
