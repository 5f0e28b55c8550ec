/**
 * The `--egress-*` flags: off without `--egress-listen`; with it, the actor identity CA and the serving certificate
 * are required, with a usage error that names what is missing; the limits are read as given.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UsageError } from '../../lib/flags.js';
import { proxyConfigOf } from '../config.js';
import { loadClientCa } from './config.js';
import { egressPki } from './testing/egress-pki.js';

describe('config', () => {
  after(async () => (await egressPki()).close());

  test('off by default; --egress-listen needs --egress-client-ca and the serving certificate; the other flags need --egress-listen', () => {
    assert.equal(proxyConfigOf([], {}).egressListener, undefined);
    assert.throws(() => proxyConfigOf(['--egress-listen', '127.0.0.1:0', '--egress-tls-cert', 'c.pem', '--egress-tls-key', 'k.pem'], {}), (err: unknown) => err instanceof UsageError && /--egress-listen needs --egress-client-ca/.test(err.message));
    assert.throws(() => proxyConfigOf(['--egress-listen', '127.0.0.1:0', '--egress-client-ca', 'ca.pem'], {}), (err: unknown) => err instanceof UsageError && /--egress-tls-cert and --egress-tls-key/.test(err.message));
    assert.throws(() => proxyConfigOf(['--egress-client-ca', 'ca.pem'], {}), (err: unknown) => err instanceof UsageError && /--egress-client-ca needs --egress-listen/.test(err.message));
    const config = proxyConfigOf(
      ['--egress-listen', '127.0.0.1:8443', '--egress-tls-cert', 'c.pem', '--egress-tls-key', 'k.pem', '--egress-client-ca', 'ca.pem', '--egress-max-tunnels-per-actor', '3', '--egress-extproc-timeout-ms', '700', '--egress-sni-max-bytes', '4096'],
      {},
    ).egressListener;
    assert.deepEqual(config && { listen: config.listen, ca: config.clientCaFile, max: config.maxTunnelsPerActor, extproc: config.extprocTimeoutMs, idle: config.tunnelIdleTimeoutMs, life: config.tunnelMaxLifetimeMs, dial: config.connectTimeoutMs, sni: config.sniTimeoutMs, sniBytes: config.sniMaxBytes }, {
      listen: { host: '127.0.0.1', port: 8443 },
      ca: 'ca.pem',
      max: 3,
      extproc: 700,
      idle: 300000,
      life: 3600000,
      dial: 5000,
      sni: 5000,
      sniBytes: 4096,
    });
    assert.throws(() => proxyConfigOf(['--egress-sni-max-bytes', '10'], {}), (err: unknown) => err instanceof UsageError && /--egress-sni-max-bytes/.test(err.message));
    assert.throws(() => proxyConfigOf(['--egress-sni-timeout-ms', '0'], {}), (err: unknown) => err instanceof UsageError && /--egress-sni-timeout-ms/.test(err.message));
    const fromEnv = proxyConfigOf([], { PROXY_EGRESS_LISTEN: '127.0.0.1:1', PROXY_EGRESS_TLS_CERT: 'c', PROXY_EGRESS_TLS_KEY: 'k', PROXY_EGRESS_CLIENT_CA: 'ca' }).egressListener;
    assert.equal(fromEnv?.clientCaFile, 'ca');
  });

  test('--egress-client-ca must hold CA certificates: a missing file, no certificate, or a leaf are usage errors naming the file', async () => {
    const pki = await egressPki();
    assert.ok(loadClientCa(pki.actorCaFile).length > 0);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'egress-ca-'));
    try {
      const empty = path.join(dir, 'empty.pem');
      await writeFile(empty, 'nothing here');
      const leaf = path.join(dir, 'leaf.pem');
      await writeFile(leaf, (await pki.actor('team', 'leaf')).cert);
      for (const [file, reason] of [[path.join(dir, 'absent.pem'), /cannot read/], [empty, /no PEM certificate/], [leaf, /is not a CA certificate/]] as const) {
        assert.throws(() => loadClientCa(file), (err: unknown) => err instanceof UsageError && err.message.startsWith(`--egress-client-ca ${file}`) && reason.test(err.message));
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
