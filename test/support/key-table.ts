import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http } from './http.js';
import { sample } from './metrics-text.js';

/** A GATEWAY_SETTINGS file with the key table's replica off: nginx learns key records on demand. */
export async function learntRecordsSettings(): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'gw-settings-')), 'gateway.yaml');
  await writeFile(file, 'key_table:\n  enabled: false\n');
  return file;
}

/** The sidecar's metrics as text. */
export async function metricsText(metricsUrl: string): Promise<string> {
  return (await http(`${metricsUrl}/metrics`)).text;
}

/** /auth answers the sidecar gave for API keys so far (every result). */
export async function apiKeyQuestions(metricsUrl: string): Promise<number> {
  const text = await metricsText(metricsUrl);
  return text
    .split('\n')
    .filter((l) => l.startsWith('gateway_auth_decisions_total{method="apk"'))
    .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** Waits until the sidecar says its nginx holds the whole key table (and /readyz is 200). */
export async function keyTableLoaded(metricsUrl: string, timeoutMs = 30_000): Promise<void> {
  const started = Date.now();
  for (;;) {
    const complete = sample(await metricsText(metricsUrl), 'gateway_key_table_complete') === 1;
    if (complete && (await http(`${metricsUrl}/readyz`)).status === 200) return;
    if (Date.now() - started > timeoutMs) throw new Error('the key table was not loaded in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
