// Labelled form controls whose management errors show next to them (the API's errors[].field).
import { html, nothing } from '../../vendor/lit-html.js';
import { ApiError } from '../api.js';

function errorsOf(error, name) {
  return error ? error.forField(name) : [];
}

/** A labelled input; `error` is the ApiError of the last submit, or null. */
export function textField({ form, name, label, value = '', type = 'text', hint, error, ...rest }) {
  const id = `${form}-${name}`;
  const messages = errorsOf(error, name);
  const described = [hint ? `${id}-hint` : '', messages.length ? `${id}-error` : '']
    .filter(Boolean)
    .join(' ');
  return html`<div class="field">
    <label for=${id}>${label}</label>
    <input id=${id} name=${name} type=${type} .value=${value ?? ''}
      ?required=${rest.required === true} min=${rest.min ?? nothing} max=${rest.max ?? nothing}
      aria-invalid=${messages.length ? 'true' : 'false'}
      aria-describedby=${described || nothing} autocomplete="off">
    ${hint ? html`<span class="hint" id=${`${id}-hint`}>${hint}</span>` : nothing}
    ${messages.length ? html`<span class="field-error" id=${`${id}-error`}>${messages.join(' ')}</span>` : nothing}
  </div>`;
}

/** A labelled checkbox, with its errors beside it. */
export function checkField({ form, name, label, checked = false, error }) {
  const id = `${form}-${name}`;
  const messages = errorsOf(error, name);
  return html`<div class="field inline">
    <input id=${id} name=${name} type="checkbox" .checked=${checked}
      aria-describedby=${messages.length ? `${id}-error` : nothing}>
    <label for=${id}>${label}</label>
    ${messages.length ? html`<span class="field-error" id=${`${id}-error`}>${messages.join(' ')}</span>` : nothing}
  </div>`;
}

/** The errors of a submit that concern none of the form's fields. */
export function formErrors(error, fields) {
  const messages = error ? error.general(fields) : [];
  return messages.length ? html`<p class="error" role="alert">${messages.join(' ')}</p>` : nothing;
}

/** `datetime-local` text (local time) as RFC 3339 with an offset, or null when empty. */
export function toRfc3339(local) {
  if (typeof local !== 'string' || local === '') return null;
  const time = new Date(local);
  return Number.isNaN(time.getTime()) ? local : time.toISOString();
}

/** RFC 3339 as `datetime-local` text in local time, for editing. */
export function toLocalInput(rfc3339) {
  if (!rfc3339) return '';
  const t = new Date(rfc3339);
  const pad = (n) => String(n).padStart(2, '0');
  return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())}T${pad(t.getHours())}:${pad(t.getMinutes())}`;
}

/**
 * A form's failed call: an API error stays on the form (`keep` stores it; the first field it
 * marks invalid, inside `within` when given, takes the focus); 401, 403 and network faults go
 * to app.fail.
 */
export function formFailure(app, err, keep, within = '') {
  if (err instanceof ApiError && err.status !== 401 && err.status !== 403) {
    keep(err);
    app.update();
    document.querySelector(`${within} [aria-invalid="true"]`.trim())?.focus();
    return;
  }
  app.fail(err);
}
