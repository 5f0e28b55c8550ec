/**
 * The control-plane client's TLS over a real gRPC server that requires client certificates: calls succeed with
 * the right CA and server name, every new connection re-reads the files, an unreadable bundle keeps the last good
 * one (error reported), a wrong server name fails, and a missing file at start is an error naming it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { controlService, createControlClient, resumeActorOnce } from '../resume/control-client.js';
import { readCredentialBundle, readTrustBundle, TlsFileError } from './files.js';
import { ReloadingTlsCredentials } from './grpc-client-credentials.js';
import { replaceText, testPki, type TestPki } from './testing/pki.js';

let pki: TestPki;
let server: grpc.Server;
let address: string;

describe('grpc-client-credentials', () => {
  before(async () => {
    pki = await testPki();
    server = new grpc.Server();
    const actor = { actor_id: 'id', version: '1', status: 'STATUS_RUNNING', ateom_pod_ip: '127.0.1.1', atespace: 'demo' };
    server.addService(controlService().service, {
      ResumeActor: (_call: unknown, cb: (err: null, res: unknown) => void) => cb(null, { actor, resumed: false }),
      GetActor: (_call: unknown, cb: (err: null, res: unknown) => void) => cb(null, { actor }),
    });
    const cp = readCredentialBundle(pki.files.controlPlane, 'cp');
    const creds = grpc.ServerCredentials.createSsl(Buffer.from(readTrustBundle(pki.files.ca, 'ca')), [{ cert_chain: Buffer.from(cp.cert), private_key: Buffer.from(cp.key) }], true);
    const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', creds, (err, p) => (err ? reject(err) : resolve(p))));
    address = `127.0.0.1:${port}`;
  });
  after(async () => {
    server.forceShutdown();
    await pki.close();
  });

  const REF = { atespace: 'demo', name: 'a', key: 'demo/a' } as never;

  async function call(credentials: grpc.ChannelCredentials): Promise<string> {
    const client = createControlClient(address, {}, credentials);
    try {
      const r = await resumeActorOnce(client, REF, 5000);
      return r.kind === 'ok' ? 'ok' : `${grpc.status[r.code]}: ${r.details}`;
    } finally {
      client.close();
    }
  }

  test('TLS with a client certificate: calls succeed; each new connection re-reads the files; a broken file keeps the last good one', async () => {
    const bundle = path.join(pki.dir, 'grpc-extproc.pem');
    await copyFile(pki.files.extproc, bundle);
    const errors: Error[] = [];
    const credentials = new ReloadingTlsCredentials({ caFile: pki.files.ca, credentialBundle: bundle, serverName: 'localhost' }, (e) => errors.push(e));
    assert.equal(await call(credentials), 'ok');
    const first = credentials.handshakes;
    assert.ok(first >= 1);

    await replaceText(bundle, 'garbage\n');
    assert.equal(await call(credentials), 'ok', 'the last good credentials stay in use');
    assert.ok(credentials.handshakes > first, 'a new connection made a new handshake');
    assert.match(errors[0]?.message ?? '', /no CERTIFICATE block/);
  });

  test('a server name the control plane certificate does not carry fails the call', async () => {
    const credentials = new ReloadingTlsCredentials({ caFile: pki.files.ca, credentialBundle: pki.files.extproc, serverName: 'not-the-control-plane' });
    assert.match(await call(credentials), /^UNAVAILABLE/);
  });

  test('a missing file at start is an error naming it', () => {
    assert.throws(
      () => new ReloadingTlsCredentials({ caFile: '/nonexistent/ca.pem', credentialBundle: pki.files.extproc, serverName: 'localhost' }, undefined, { caFile: '--apiserver-ca', credentialBundle: '--apiserver-credential-bundle' }),
      (e: unknown) => e instanceof TlsFileError && /--apiserver-ca "\/nonexistent\/ca.pem" cannot be read/.test(e.message),
    );
  });
});
