/**
 * The HTTPS listener's certificate, end to end on a real proxy (in the test's process): rotated from its files under
 * load (new handshakes get the new certificate, no request fails), a bad file at reload keeps the certificate in use
 * and logs an error, and a missing or bad file at start is a clear start-up error.
 * Needs processes: a missing certificate must stop `actor-edge proxy` at start with its reason (that proxy only).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import tls from 'node:tls';
import https from 'node:https';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import { routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';
import { STACK_TIMEOUTS } from '../testing/stack.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { createTestCa, type TestCa } from '../testing/throwaway-ca.js';

const HOST = actorHost('tls-actor');
let ca: TestCa;
let up: Upstream;
let ep: ScriptedExtProc;
let proxy: InProcessTestProxy;
let certFile: string;
let keyFile: string;
let first: { certFile: string; keyFile: string };
let second: { certFile: string; keyFile: string };

before(async () => {
  ca = await createTestCa();
  [first, second] = [await ca.issue('first'), await ca.issue('second')];
  certFile = path.join(ca.dir, 'serving.crt');
  keyFile = path.join(ca.dir, 'serving.key');
  await copyFile(first.certFile, certFile);
  await copyFile(first.keyFile, keyFile);
  up = await startUpstream((_req, res) => res.end('ok'));
  ep = await startScriptedExtProc(() => routeTo(up.address, '80'));
  proxy = await startTestProxy({ mode: 'in-process', extproc: ep.address, args: [...STACK_TIMEOUTS, '--tls-listen', '127.0.0.1:0', '--tls-cert', certFile, '--tls-key', keyFile] });
});

after(async () => {
  // The drain takes the handshake timeout (the 60 s head timeout), not --drain-timeout-ms: servedName()'s client
  // leaves at the end of its handshake, its Finished unsent, and the HTTPS listener's close waits for that
  // half-open connection (a proxy process does the same on SIGTERM; the process harness kills it after 5 s).
  await proxy?.stop();
  await ep?.close();
  await up?.close();
  await ca?.remove();
});

const tlsAddress = (): { host: string; port: number } => {
  const a = proxy.addresses.tls as string;
  return { host: '127.0.0.1', port: Number(a.slice(a.lastIndexOf(':') + 1)) };
};

/** The subject CN of the certificate a new handshake presents. */
function servedName(): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ ...tlsAddress(), servername: 'localhost', ca: [], rejectUnauthorized: false }, () => {
      const cn = socket.getPeerCertificate().subject?.CN;
      socket.destroy();
      resolve(String(cn));
    });
    socket.on('error', reject);
  });
}

/** Replaces a file by a rename, as certificate tools do. */
async function replace(target: string, source: string | Buffer): Promise<void> {
  const tmp = `${target}.tmp`;
  await writeFile(tmp, typeof source === 'string' ? await readFile(source) : source);
  await rename(tmp, target);
}

test('rotation under load: new handshakes get the new certificate and no request fails', async () => {
  assert.equal(await servedName(), 'first');
  const ca1 = await readFile(ca.caFile);
  let ok = 0;
  const failures: string[] = [];
  let stop = false;
  const { port } = tlsAddress();
  const load = async (): Promise<void> => {
    while (!stop) {
      // A new connection for every request (no agent): each one is a new, verified handshake.
      try {
        const status = await new Promise<number>((resolve, reject) => {
          const req = https.request({ host: '127.0.0.1', port, servername: 'localhost', ca: ca1, agent: false, headers: { host: HOST } }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          });
          req.on('error', reject);
          req.end();
        });
        if (status === 200) ok++;
        else failures.push(String(status));
      } catch (err) {
        failures.push((err as Error).message);
      }
    }
  };
  const runners = [load(), load(), load()];
  await waitFor(() => ok >= 20 || failures.length > 0, 10_000, 'requests before the rotation');
  assert.deepEqual(failures, [], 'before the rotation');
  await replace(keyFile, second.keyFile);
  await replace(certFile, second.certFile);
  await waitFor(async () => (await servedName()) === 'second', 10_000, 'the new certificate served');
  const after = ok;
  await waitFor(() => ok >= after + 20, 10_000, 'requests after the rotation');
  stop = true;
  await Promise.all(runners);
  assert.deepEqual(failures, []);
});

test('a bad file at reload keeps the certificate in use and logs an error', async () => {
  const before = await servedName();
  await replace(certFile, Buffer.from('not a certificate\n'));
  await waitFor(() => proxy.logs().some((l) => String(l.msg).startsWith('tls certificate reload failed')), 10_000, 'the reload error');
  assert.equal(await servedName(), before);
});

test('a missing certificate file at start is a clear start-up error', async () => {
  const missing = path.join(ca.dir, 'missing.crt');
  await assert.rejects(
    startTestProxy({ args: ['--tls-listen', '127.0.0.1:0', '--tls-cert', missing, '--tls-key', keyFile], readyTimeoutMs: 10_000 }),
    (err: Error) => err.message.includes(`--tls-cert ${missing}: cannot read (ENOENT)`),
  );
});
