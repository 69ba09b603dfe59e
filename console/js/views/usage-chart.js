// A client's usage as stacked SVG bars (allowed, limited, failed per step), drawn by hand: a
// few dozen lines, no chart library to vendor. Colours come from presentation attributes,
// which the console's CSP (no inline style) allows. The same numbers are in a table beside it
// for keyboard and screen-reader users; each bar also names its numbers on hover (<title>).
import { html, nothing, svg } from '../../vendor/lit-html.js';

const WIDTH = 720;
const HEIGHT = 220;
const LEFT = 48;
const BOTTOM = 24;
const TOP = 8;
export const SERIES = [
  ['allowed', 'Allowed', '#0a58ca'],
  ['limited', 'Limited (429)', '#d97706'],
  ['failed', 'Failed authentications', '#b42318'],
];

function label(start, step) {
  const t = new Date(start);
  if (step === 'day') return t.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
  return t.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

/** A round upper bound for the axis: 1, 2 or 5 times a power of ten. */
function ceiling(max) {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * power).find((v) => v >= max);
}

/** The chart of `usage` (the API's series), with a legend and totals. */
export function usageChart(usage) {
  const points = usage.points;
  const top = ceiling(Math.max(0, ...points.map((p) => p.allowed + p.limited + p.failed)));
  const plotW = WIDTH - LEFT - 8;
  const plotH = HEIGHT - TOP - BOTTOM;
  const slot = plotW / Math.max(1, points.length);
  const bar = Math.max(1, slot * 0.8);
  const y = (v) => TOP + plotH - (v / top) * plotH;
  const totals = Object.fromEntries(
    SERIES.map(([key]) => [key, points.reduce((n, p) => n + p[key], 0)]),
  );
  const every = Math.max(1, Math.ceil(points.length / 8));
  const summary = `Requests per ${usage.step}: ${totals.allowed} allowed, ${totals.limited} limited, ${totals.failed} failed authentications`;
  return html`<figure class="chart">
    <svg id="usage-chart" viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label=${summary}>
      ${[0, 0.5, 1].map(
        (
          f,
        ) => svg`<line x1=${LEFT} x2=${WIDTH - 8} y1=${y(top * f)} y2=${y(top * f)} stroke="#d0d7de" />
          <text x=${LEFT - 6} y=${y(top * f) + 4} text-anchor="end" font-size="11" fill="#57606a">${Math.round(top * f)}</text>`,
      )}
      ${points.map((p, i) => {
        const x = LEFT + i * slot + (slot - bar) / 2;
        let base = 0;
        return svg`<g class="bar">
          <title>${`${label(p.start, usage.step)}: ${p.allowed} allowed, ${p.limited} limited, ${p.failed} failed`}</title>
          ${SERIES.map(([key, , colour]) => {
            const from = base;
            base += p[key];
            return p[key] > 0
              ? svg`<rect x=${x} width=${bar} y=${y(base)} height=${y(from) - y(base)} fill=${colour} data-series=${key} />`
              : nothing;
          })}
          ${
            i % every === 0
              ? svg`<text x=${x + bar / 2} y=${HEIGHT - 6} text-anchor="middle" font-size="11" fill="#57606a">${label(p.start, usage.step)}</text>`
              : nothing
          }
        </g>`;
      })}
    </svg>
    <figcaption>
      ${SERIES.map(
        ([
          key,
          name,
          colour,
        ]) => html`<span class="legend"><svg width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill=${colour} /></svg>
          ${name}: <strong data-total=${key}>${totals[key]}</strong></span>`,
      )}
    </figcaption>
  </figure>
  <details class="usage-table">
    <summary>The numbers as a table</summary>
    <table>
      <caption class="visually-hidden">${summary}</caption>
      <thead><tr><th scope="col">From</th>${SERIES.map(([, name]) => html`<th scope="col">${name}</th>`)}</tr></thead>
      <tbody>${points.map(
        (
          p,
        ) => html`<tr><td>${new Date(p.start).toLocaleString(undefined, { timeZoneName: 'short' })}</td>
          ${SERIES.map(([key]) => html`<td>${p[key]}</td>`)}</tr>`,
      )}</tbody>
    </table>
  </details>`;
}
