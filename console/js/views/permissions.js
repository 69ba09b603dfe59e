// The permissions of one API client on its detail screen: a choice between "everything" (null)
// and a list of rules, the rules as a small table (methods as checkboxes, the path pattern as
// text), and what the client may call in plain words. The rules are checked by the API's own
// validator (common/permissions.ts, compiled into vendor/common/ by `npm run build`) before
// they are sent; whatever the API still refuses is shown the same way, next to its rule.

import {
  describePermissions,
  describeRule,
  MAX_RULES,
  RULE_METHODS,
  validatePermissions,
} from '../../vendor/common/permissions.js';
import { html, nothing } from '../../vendor/lit-html.js';
import { ApiError, call } from '../api.js';
import { formErrors, formFailure } from './fields.js';

/** A rule's fields, as the API names them (`permissions[2].path`). */
const fieldOf = (index, name) => `permissions[${index}]${name ? `.${name}` : ''}`;
const RULE_FIELDS = ['methods', 'path', ''];

/** The editor's state for `permissions` as the API gave it. */
export function permissionsDraft(permissions) {
  const rules = (permissions ?? []).map((r) => ({ methods: [...r.methods], path: r.path }));
  return { everything: permissions === null, rules, error: null };
}

/**
 * What the draft would send: null for "everything". Removing the last rule chooses everything,
 * so a list without rules is only ever one the API gave (`[]`: the client may call nothing),
 * kept as it is.
 */
function draftValue(draft) {
  if (draft.everything) return null;
  return draft.rules.map((r) => ({
    methods: RULE_METHODS.filter((m) => r.methods.includes(m)),
    path: r.path,
  }));
}

/** The permissions a client may call, as the list of plain-words lines. */
function plainWords(lines, id) {
  return html`<ul class="plain-words" id=${id}>${lines.map((line) => html`<li>${line}</li>`)}</ul>`;
}

/** The draft in plain words: a rule not yet valid is said to be so, not guessed at. */
function preview(draft) {
  const value = draftValue(draft);
  if (value === null || value.length === 0)
    return plainWords(describePermissions(value), 'permissions-preview');
  return plainWords(
    value.map((rule, i) =>
      validatePermissions([rule]).ok
        ? describeRule(rule)
        : `rule ${i + 1} is not complete or not valid yet`,
    ),
    'permissions-preview',
  );
}

function focusSoon(selector) {
  // After lit-html has drawn the change.
  queueMicrotask(() => document.querySelector(selector)?.focus());
}

function methodBoxes(app, rule, i, messages) {
  const toggle = (method) => (event) => {
    rule.methods = event.target.checked
      ? [...rule.methods, method]
      : rule.methods.filter((m) => m !== method);
    app.update();
  };
  return html`<div class="methods" role="group" aria-label=${`Methods of rule ${i + 1}`}
      aria-describedby=${messages.length ? `rule-${i}-methods-error` : nothing}>
    ${RULE_METHODS.map(
      (
        m,
      ) => html`<label class="method"><input type="checkbox" id=${`rule-${i}-${m}`} data-method=${m}
        .checked=${rule.methods.includes(m)} @change=${toggle(m)}> ${m}</label>`,
    )}
  </div>
  ${messages.length ? html`<span class="field-error" id=${`rule-${i}-methods-error`}>Rule ${i + 1}: ${messages.join(' ')}</span>` : nothing}`;
}

function ruleRow(app, draft, rule, i) {
  const error = draft.error;
  const messagesOf = (name) => (error ? error.forField(fieldOf(i, name)) : []);
  const pathMessages = [...messagesOf('path'), ...messagesOf('')];
  const remove = () => {
    draft.rules.splice(i, 1);
    draft.error = null;
    // No rule left is "everything" (null), and the choice says so.
    if (draft.rules.length === 0) draft.everything = true;
    app.update();
    focusSoon(
      draft.everything
        ? '#permissions-everything'
        : `#rule-${Math.min(i, draft.rules.length - 1)}-remove`,
    );
  };
  return html`<tr data-rule=${i}>
    <th scope="row">${i + 1}</th>
    <td>${methodBoxes(app, rule, i, messagesOf('methods'))}</td>
    <td>
      <input type="text" class="pattern" id=${`rule-${i}-path`} aria-label=${`Path pattern of rule ${i + 1}`}
        .value=${rule.path} placeholder="/resources/*/reports/**" autocomplete="off" spellcheck="false"
        aria-invalid=${pathMessages.length ? 'true' : 'false'}
        aria-describedby=${pathMessages.length ? `rule-${i}-path-error` : nothing}
        @input=${(event) => {
          rule.path = event.target.value;
          app.update();
        }}>
      ${pathMessages.length ? html`<span class="field-error" id=${`rule-${i}-path-error`}>Rule ${i + 1}: ${pathMessages.join(' ')}</span>` : nothing}
    </td>
    <td><button type="button" id=${`rule-${i}-remove`} data-action="remove-rule"
      aria-label=${`Remove rule ${i + 1}`} @click=${remove}>Remove</button></td>
  </tr>`;
}

function rulesTable(app, draft) {
  const add = () => {
    draft.rules.push({ methods: ['GET'], path: '' });
    app.update();
    focusSoon(`#rule-${draft.rules.length - 1}-path`);
  };
  return html`<table id="permission-rules">
      <caption class="visually-hidden">Rules: a request passes when a rule lists its method and its pattern matches its path</caption>
      <thead><tr><th scope="col">Rule</th><th scope="col">Methods</th><th scope="col">Path pattern</th>
        <th scope="col"><span class="visually-hidden">Remove</span></th></tr></thead>
      <tbody>${draft.rules.map((rule, i) => ruleRow(app, draft, rule, i))}</tbody>
    </table>
    ${
      draft.rules.length === 0
        ? html`<p class="hint" id="no-rules">No rule: this client may call nothing (set so through the API).
            Add a rule, or choose everything.</p>`
        : nothing
    }
    <div class="toolbar"><button type="button" id="add-rule" ?disabled=${draft.rules.length >= MAX_RULES}
      @click=${add}>Add a rule</button>
      <span class="hint">At most ${MAX_RULES} rules. <code>*</code> is one path segment; a final
        <code>/**</code> is anything below. GET allows HEAD too.</span></div>`;
}

function choice(app, draft) {
  const choose = (everything) => () => {
    draft.everything = everything;
    draft.error = null;
    if (!everything && draft.rules.length === 0) {
      draft.rules.push({ methods: ['GET'], path: '' });
      focusSoon('#rule-0-path');
    }
    app.update();
  };
  return html`<fieldset class="choice">
    <legend>This client may call</legend>
    <div class="field inline"><input type="radio" id="permissions-everything" name="permissions-choice"
      .checked=${draft.everything} @change=${choose(true)}>
      <label for="permissions-everything">everything (no rules)</label></div>
    <div class="field inline"><input type="radio" id="permissions-rules" name="permissions-choice"
      .checked=${!draft.everything} @change=${choose(false)}>
      <label for="permissions-rules">only what these rules allow</label></div>
  </fieldset>`;
}

/** The rows' fields (shown next to their rule): every other error goes above the button. */
function shownFields(draft) {
  return draft.rules.flatMap((_, i) => RULE_FIELDS.map((name) => fieldOf(i, name)));
}

/** The permissions panel of the detail screen; `reload` reads the client again after a save. */
export function permissionsForm(app, client, draft, reload) {
  const onSubmit = async (event) => {
    event.preventDefault();
    // A notice about the last save is stale once the next one starts.
    app.message = null;
    app.update();
    const value = draftValue(draft);
    // The API's own check first: nothing it would refuse is sent. Its problems in the words
    // and shape of the API's 400 (the browser suite compares the two).
    const checked = validatePermissions(value);
    if (!checked.ok) {
      draft.error = new ApiError(
        400,
        checked.problems.map((p) => ({
          code: 'INVALID_FIELD',
          field: p.field,
          message: `${p.message}.`,
        })),
      );
      app.update();
      document.querySelector('#panel-permissions [aria-invalid="true"]')?.focus();
      return;
    }
    try {
      await call('PUT', `/api-clients/${client.id}`, { permissions: value });
    } catch (err) {
      formFailure(
        app,
        err,
        (e) => {
          draft.error = e;
        },
        '#panel-permissions',
      );
      return;
    }
    app.message = {
      kind: 'notice',
      text: `Saved: ${client.name} ${describePermissions(value).join('; ')}.`,
    };
    await reload();
  };
  return html`<form class="panel stack" id="panel-permissions" aria-labelledby="permissions-title" novalidate
      @submit=${onSubmit}>
    <h3 id="permissions-title">Permissions</h3>
    <p class="hint">What this client may call through the gateway; a PUT applies on its next
      request. The management API also needs the admin role.</p>
    ${choice(app, draft)}
    ${draft.everything ? nothing : rulesTable(app, draft)}
    <section class="plain" aria-labelledby="permissions-preview-title">
      <h4 id="permissions-preview-title">Once saved, this client</h4>
      ${preview(draft)}
    </section>
    ${formErrors(draft.error, shownFields(draft))}
    <div class="toolbar"><button class="primary" type="submit" id="save-permissions">Save the permissions</button></div>
  </form>`;
}

/** The permissions in force, in plain words, for the facts list. */
export function permissionsInForce(permissions) {
  return plainWords(describePermissions(permissions ?? null), 'detail-permissions');
}
