/**
 * End to end, an actor certificate that expires while its HTTP/2 connection to the egress listener is open: the real
 * apiserver-stub (minting a certificate of a few seconds), extproc's egress mode and a proxy whose verdict TTL
 * (60 s) outlives the certificate. The verdict cached for it expires at the certificate's NotAfter, not at the TTL;
 * before NotAfter the connection's CONNECTs are allowed (a hit after the first), after it a new CONNECT on the same
 * connection is 403 `invalid actor certificate` — neither the cache nor ext_proc consulted — and so is one on a new
 * connection.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../../lib/testing/wait.js';
import { h1Connect, h2Connect, h2Session, readBytes, startEcho, type Destination } from '../egress/testing/egress-clients.js';
import { measured, miss, hit, startEgressStack, type EgressProxy, type EgressStack } from '../testing/egress/egress-stack.js';

const TTL_MS = 60_000;
/**
 * The certificate's life, waited out in full: short, yet NotAfter (whole seconds, so up to a second sooner) still
 * comes well after the two CONNECTs before it (a few hundred milliseconds on a loaded machine).
 */
const LIFETIME_MS = 3000;
const INVALID = 'invalid actor certificate';

let stack: EgressStack;
let proxy: EgressProxy;
let a: Destination;
let b: Destination;

describe('an actor certificate that expires on an open connection', () => {
  before(async () => {
    stack = await startEgressStack();
    proxy = await stack.startProxy({ ttlMs: TTL_MS });
    a = await startEcho();
    b = await startEcho();
  });

  after(async () => {
    await stack?.stop();
    await a?.close();
    await b?.close();
  });

  const expiredRefusals = async (): Promise<number> =>
    (await proxy.admin<{ egressTunnels: { certificateRefusals: { expired: number } } }>('GET', '/stats')).body.egressTunnels.certificateRefusals.expired;

  test('a certificate expiring while its HTTP/2 connection is open: its verdict lives until NotAfter, not the TTL; after NotAfter a CONNECT on that connection is 403 invalid actor certificate, the cache and ext_proc untouched', async () => {
    const name = 'actor-000';
    await stack.setPolicy(name, { rules: [{ kind: 'all', ports: 'all' }] });
    const cert = await stack.certificate(name, { lifetimeMs: LIFETIME_MS });
    const session = await h2Session(proxy.target, cert);
    try {
      const beforeFirst = Date.now();
      const open = await measured(stack, proxy, async () => {
        const answer = await h2Connect(session, a.address);
        return { status: answer.status, body: answer.body, stream: answer.stream };
      });
      assert.deepEqual(open, miss(200, '', { getActor: 1, policy: 1 }));
      const [verdict] = await proxy.verdictsOf(cert);
      assert.ok(verdict !== undefined, 'the allow is cached');
      assert.ok(verdict.expiresInMs <= cert.notAfterMs - beforeFirst, `the verdict expires by NotAfter (in ${verdict.expiresInMs} ms; NotAfter in ${cert.notAfterMs - beforeFirst} ms)`);

      // Keeps a tunnel open on the connection (the connection is not idle while the certificate runs out).
      const tunnel = await h2Connect(session, a.address);
      assert.equal(tunnel.status, 200);
      tunnel.stream.write('ok');
      assert.equal(await readBytes(tunnel.stream, 2), 'ok');
      assert.equal((await proxy.verdictsOf(cert))[0]?.hits, 1, 'the second CONNECT was a hit');

      await waitFor(() => Date.now() > cert.notAfterMs, LIFETIME_MS + 5000, 'the certificate\'s NotAfter');
      const refusalsBefore = await expiredRefusals();
      for (const destination of [a.address, b.address]) {
        const refused = await measured(stack, proxy, async () => h2Connect(session, destination));
        assert.deepEqual(refused, { status: 403, body: INVALID, hits: 0, misses: 0, getActor: 0, policy: 0 }, destination);
      }
      assert.equal((await expiredRefusals()) - refusalsBefore, 2);
      assert.deepEqual(await proxy.verdictsOf(cert), [], 'its verdict expired with it');

      // A new connection with it: the same.
      const fresh = await measured(stack, proxy, async () => {
        const answer = await h1Connect(proxy.target, cert, a.address);
        answer.socket.destroy();
        return answer;
      });
      assert.deepEqual(fresh, { status: 403, body: INVALID, hits: 0, misses: 0, getActor: 0, policy: 0 });
      tunnel.stream.close();
    } finally {
      session.destroy();
    }

    // The actor's next certificate (a new activation) is allowed again, through ext_proc then from the cache.
    const next = await stack.certificate(name);
    const session2 = await h2Session(proxy.target, next);
    try {
      const connect = async () => {
        const answer = await h2Connect(session2, a.address);
        answer.stream.close();
        return answer;
      };
      assert.deepEqual(await measured(stack, proxy, connect), miss(200, '', { getActor: 1, policy: 1 }));
      assert.deepEqual(await measured(stack, proxy, connect), hit(200, ''));
    } finally {
      session2.destroy();
    }
  });
});
