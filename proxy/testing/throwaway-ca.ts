/**
 * A throw-away certificate authority for HTTPS tests, made with the system `openssl` in a temporary directory:
 * `issue(name)` signs a serving certificate for `localhost` and 127.0.0.1 (each call a new key and serial).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestCa {
  readonly dir: string;
  readonly caFile: string;
  /** Issues `<name>.crt` / `<name>.key` in the CA's directory. */
  issue(name: string): Promise<{ certFile: string; keyFile: string }>;
  remove(): Promise<void>;
}

export async function createTestCa(): Promise<TestCa> {
  const dir = await mkdtemp(path.join(tmpdir(), 'actor-edge-ca-'));
  const caKey = path.join(dir, 'ca.key');
  const caFile = path.join(dir, 'ca.crt');
  await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', caKey, '-out', caFile, '-days', '2', '-subj', '/CN=actor-edge test CA']);
  const ext = path.join(dir, 'server.ext');
  await run('sh', ['-c', `printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\nextendedKeyUsage=serverAuth\\n' > "${ext}"`]);
  return {
    dir,
    caFile,
    async issue(name) {
      const keyFile = path.join(dir, `${name}.key`);
      const csr = path.join(dir, `${name}.csr`);
      const certFile = path.join(dir, `${name}.crt`);
      await run('openssl', ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyFile, '-out', csr, '-subj', `/CN=${name}`]);
      await run('openssl', ['x509', '-req', '-in', csr, '-CA', caFile, '-CAkey', caKey, '-CAcreateserial', '-out', certFile, '-days', '2', '-extfile', ext]);
      return { certFile, keyFile };
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
