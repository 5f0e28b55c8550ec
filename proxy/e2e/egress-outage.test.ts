/**
 * End to end, the control plane down (the stub's outage: every ateapi.Control call answers UNAVAILABLE) behind the
 * egress verdict cache: the real apiserver-stub, extproc's egress mode and two proxies with the egress listener, one
 * with a long verdict TTL and one with a short one. A CONNECT that misses is 503 `control plane unavailable` and
 * nothing is cached of it (the next one asks again, and after the outage it is allowed, as a miss, never a hit of the
 * 503); a verdict cached before the outage is still served during it, over HTTP/1.1 and HTTP/2, but only within its
 * TTL.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { h2Connect, h2Session, readBytes, startEcho, type Destination } from '../egress/testing/egress-clients.js';
import { ATESPACE, h1Through, hit, measured, miss, startEgressStack, storing, type ActorCertificate, type EgressProxy, type EgressStack } from '../testing/egress/egress-stack.js';

const SHORT_TTL_MS = 300;
const LONG_TTL_MS = 60_000;
const UNAVAILABLE = 'control plane unavailable';

let stack: EgressStack;
let short: EgressProxy;
let long: EgressProxy;
let a: Destination;
let b: Destination;

describe('the control plane down behind the egress verdict cache', () => {
  before(async () => {
    stack = await startEgressStack();
    short = await stack.startProxy({ ttlMs: SHORT_TTL_MS });
    long = await stack.startProxy({ ttlMs: LONG_TTL_MS });
    a = await startEcho();
    b = await startEcho();
  });

  after(async () => {
    await stack?.stubAdmin('DELETE', '/outage').catch(() => undefined);
    await stack?.stop();
    await a?.close();
    await b?.close();
  });

  const through = (proxy: EgressProxy, cert: ActorCertificate, destination: string) => measured(stack, proxy, () => h1Through(proxy, cert, destination));

  test('control plane down: misses are 503 and never cached; verdicts cached before the outage are served during it within their TTL; after it, a miss is allowed', async () => {
    const name = 'actor-000';
    await stack.setPolicy(name, { rules: [{ kind: 'cidrs', cidrs: ['127.0.0.1/32'], ports: 'all' }] });
    const cert = await stack.certificate(name);
    // Another actor, never seen by the proxies, ready before the outage (minting is the stub's admin, not the control plane).
    await stack.setPolicy('actor-001', { rules: [{ kind: 'all', ports: 'all' }] });
    const stranger = await stack.certificate('actor-001');
    assert.deepEqual(await through(long, cert, a.address), miss(200, 'ping', { getActor: 1, policy: 1 }));
    assert.deepEqual(await storing(short, () => through(short, cert, a.address)), miss(200, 'ping', { getActor: 1, policy: 1 }));

    assert.equal((await stack.stubAdmin('POST', '/outage', { ms: 600_000 })).status, 200);
    // A cached allow: still a tunnel, without a control-plane read — over HTTP/1.1 and over HTTP/2.
    assert.deepEqual(await through(long, cert, a.address), hit(200, 'ping'));
    const session = await h2Session(long.target, cert);
    try {
      const s0 = await long.cacheStats();
      const open = await h2Connect(session, a.address);
      assert.equal(open.status, 200);
      open.stream.write('h2');
      assert.equal(await readBytes(open.stream, 2), 'h2');
      open.stream.close();
      const refused = await h2Connect(session, b.address);
      assert.deepEqual([refused.status, refused.body], [503, UNAVAILABLE]);
      const s1 = await long.cacheStats();
      assert.deepEqual([s1.hits - s0.hits, s1.misses - s0.misses], [1, 1]);
    } finally {
      session.destroy();
    }

    // A miss: 503, the control plane asked (and failing), nothing cached — the next CONNECT asks again.
    const notCached = (await long.cacheStats()).notCached.unavailable;
    assert.deepEqual(await through(long, cert, b.address), miss(503, UNAVAILABLE, { getActor: 1, policy: 0 }));
    assert.deepEqual(await through(long, cert, b.address), miss(503, UNAVAILABLE, { getActor: 1, policy: 0 }));
    assert.deepEqual(await through(long, stranger, a.address), miss(503, UNAVAILABLE, { getActor: 1, policy: 0 }));
    assert.equal((await long.cacheStats()).notCached.unavailable - notCached, 3);
    assert.deepEqual((await long.verdictsOf(cert)).map((v) => v.destination), [a.address], 'nothing stored for the destination the outage answered');
    assert.deepEqual(await long.verdictsOf(stranger), []);

    // Within its TTL only: once the short-TTL proxy's allow expired, the outage answers.
    await short.untilExpired(cert, a.address);
    assert.deepEqual(await through(short, cert, a.address), miss(503, UNAVAILABLE, { getActor: 1, policy: 0 }));
    assert.deepEqual(await short.verdictsOf(cert), []);

    assert.equal((await stack.stubAdmin('DELETE', '/outage')).status, 200);
    // After the outage: misses (no 503 was remembered), allowed, then cached.
    assert.deepEqual(await through(long, cert, b.address), miss(200, 'ping', { getActor: 1, policy: 1 }));
    assert.deepEqual(await through(long, cert, b.address), hit(200, 'ping'));
    assert.deepEqual(await through(long, stranger, a.address), miss(200, 'ping', { getActor: 1, policy: 1 }));
    assert.deepEqual(await through(short, cert, a.address), miss(200, 'ping', { getActor: 1, policy: 1 }));
    assert.equal((await stack.stubAdmin('GET', `/actors/${ATESPACE}/${name}`)).body.status, 'RUNNING');
  });
});
