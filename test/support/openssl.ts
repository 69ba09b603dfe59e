import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A certificate made by the openssl CLI, standing in for one an operator supplies (node-forge
 * only issues RSA; operators may bring EC certificates, certificates without a SAN, ...).
 */
export async function opensslCertificate(
  dir: string,
  name: string,
  args: string[],
): Promise<{ certificatePem: string; keyPem: string }> {
  const cert = join(dir, `${name}.crt`);
  const key = join(dir, `${name}.key`);
  await new Promise<void>((resolve, reject) =>
    execFile(
      'openssl',
      ['req', '-x509', '-nodes', '-keyout', key, '-out', cert, ...args],
      (err, _stdout, stderr) => (err ? reject(new Error(stderr)) : resolve()),
    ),
  );
  return { certificatePem: await readFile(cert, 'utf8'), keyPem: await readFile(key, 'utf8') };
}
