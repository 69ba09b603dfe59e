import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { locateNginx } from '../../native/nginx.js';
import { startNativeStack } from '../support/native-stack.js';
import { gatewaySuite } from './gateway-suite.js';

describe('native gateway (npm start)', () => {
  gatewaySuite(() => startNativeStack({ fqdn: 'gateway.e2e.test' }));
});

describe('native gateway homes', () => {
  test('two fresh homes get different certificates; a second start of one home keeps its own', async () => {
    const fingerprint = async (home: string) =>
      new X509Certificate(await readFile(join(home, 'config/nginx/ssl/nginx.crt'))).fingerprint256;
    const a = await startNativeStack();
    const b = await startNativeStack();
    const [fa, fb] = [await fingerprint(a.home), await fingerprint(b.home)];
    await b.close();
    expect(fa).not.toBe(fb);
    await a.restart();
    expect(await fingerprint(a.home)).toBe(fa);
    await a.close();
  }, 180_000);

  test('without nginx the run command names the package to install', () => {
    expect(() => locateNginx({ PATH: '/nonexistent' }, [])).toThrow(
      /nginx is not installed.*apt-get install nginx-light/,
    );
  });
});
