/**
 * checkActorCertificate on what node's TLS server actually reports (getPeerX509Certificate, authorized,
 * authorizationError, read by presentedCertificateOf) for each actor certificate variant, on a real handshake over 127.0.0.1: a server that asks
 * for a client certificate, verifies it against the actor identity CA, and lets the handshake finish either way so
 * the check decides.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { actorCertFixtures, BAD_ACTOR_CERTS, type ActorCertFixtures, type BadActorCert, type TestActorCert } from '../tls/testing/actor-certs.js';
import { checkActorCertificate, presentedCertificateOf, type ActorCertificateCheck, type PresentedCertificate } from './actor-certificate.js';

let f: ActorCertFixtures;
let server: tls.Server;
let port = 0;
/** What the server saw on each connection, in order. */
const seen: PresentedCertificate[] = [];

describe('actor-certificate.handshake', () => {
  before(async () => {
    f = await actorCertFixtures();
    const bundle = readFileSync(f.server);
    server = tls.createServer({ cert: bundle, key: bundle, ca: readFileSync(f.caFile), requestCert: true, rejectUnauthorized: false }, (socket) => {
      seen.push(presentedCertificateOf(socket));
      socket.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    await new Promise((resolve) => server.close(resolve));
    await f.close();
  });

  /** Connects with `cert` (none: no client certificate) and returns the check of what the server saw. */
  async function handshake(cert: TestActorCert | undefined): Promise<ActorCertificateCheck> {
    const before = seen.length;
    await new Promise<void>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: readFileSync(f.serverCaFile), ...(cert === undefined ? {} : { cert: cert.certPem, key: cert.keyPem }) });
      socket.on('data', () => undefined);
      socket.on('end', () => resolve());
      socket.on('error', reject);
    });
    const presented = seen[before];
    assert.ok(presented !== undefined && seen.length === before + 1, 'the server saw the connection');
    return checkActorCertificate(presented, Date.now());
  }

  test('a minted actor certificate, in either URI form, is accepted on a real handshake', async () => {
    for (const cert of [f.good, f.goodOlderForm]) {
      const check = await handshake(cert);
      assert.equal(check.kind, 'actor', JSON.stringify(check));
      assert.deepEqual(check.kind === 'actor' ? check.actor : undefined, f.actor);
    }
  });

  test('every bad variant is refused with its reason on a real handshake, and no certificate at all too', async () => {
    for (const [variant, reason] of Object.entries(BAD_ACTOR_CERTS) as [BadActorCert, string][]) {
      const check = await handshake(f.bad[variant]);
      assert.equal(check.kind === 'refused' ? check.reason : check.kind, reason, `${variant}: ${JSON.stringify(check)}`);
    }
    const none = await handshake(undefined);
    assert.equal(none.kind === 'refused' ? none.reason : none.kind, 'no-certificate');
  });
});
