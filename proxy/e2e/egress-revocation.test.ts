/**
 * End to end, how a change in the control plane reaches the egress verdict cache: the real apiserver-stub, extproc's
 * egress mode and two proxies with the egress listener, one with a short verdict TTL (what happens once a verdict
 * expires) and one with a long TTL (what a live verdict does, and its eviction through the admin). Every CONNECT's
 * cost is read on both sides: the proxy's cache hits and misses, and the stub's GetActor and GetActorEgressPolicy
 * answers.
 * - An actor deleted and recreated under the same name, with a new certificate (same URI, new key): the new
 *   certificate's CONNECT goes to ext_proc while the old certificate's allow is still cached; the old certificate is
 *   refused `unknown actor` once its entry expired.
 * - A suspended actor: refused with its state once the cached allow expired, asked again every time; deleted: refused
 *   `unknown actor`.
 * - A policy denial is cached (a hit, no control-plane read); a policy naming the destination opens it once the
 *   denial expired, and at once after `DELETE /cache/egress?actor=`. With curl as the actor's HTTP/1.1 client.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { eventually, waitFor } from '../../lib/testing/wait.js';
import { startEcho, type Destination } from '../egress/testing/egress-clients.js';
import { ATESPACE, h1Through, hit, measured, miss, startEgressStack, storing, type ActorCertificate, type EgressProxy, type EgressStack } from '../testing/egress/egress-stack.js';

const run = promisify(execFile);

const SHORT_TTL_MS = 300;
const LONG_TTL_MS = 60_000;
const ALLOW_ALL = { rules: [{ kind: 'all', ports: 'all' }] };

let stack: EgressStack;
let short: EgressProxy;
let long: EgressProxy;
let echo: Destination;
let web: http.Server;
let webAddress: string;

describe('control-plane changes reaching the egress verdict cache', () => {
  before(async () => {
    stack = await startEgressStack();
    short = await stack.startProxy({ ttlMs: SHORT_TTL_MS });
    long = await stack.startProxy({ ttlMs: LONG_TTL_MS });
    echo = await startEcho();
    web = http.createServer((_req, res) => res.end('hello from the destination'));
    web.listen(0, '127.0.0.1');
    await once(web, 'listening');
    webAddress = `127.0.0.1:${(web.address() as AddressInfo).port}`;
  });

  after(async () => {
    await stack?.stop();
    await echo?.close();
    web?.closeAllConnections();
    await new Promise((resolve) => web?.close(resolve));
  });

  const through = (proxy: EgressProxy, cert: ActorCertificate, destination: string) => measured(stack, proxy, () => h1Through(proxy, cert, destination));

  /** curl as the actor: `-p -x https://<egress listener>` with the actor's certificate; the CONNECT's status and the body. */
  async function curl(proxy: EgressProxy, cert: ActorCertificate, url: string): Promise<{ status: number; body: string }> {
    const files = await stack.files(cert);
    const args = ['-sS', '-p', '-x', proxy.url, '--proxy-cacert', stack.serverCaFile, '--proxy-cert', files.certFile, '--proxy-key', files.keyFile, '--max-time', '10', '-w', '\n%{http_connect}', url];
    let stdout: string;
    try {
      ({ stdout } = await run('curl', args));
    } catch (err) {
      // A refused CONNECT fails the transfer (exit 56); what curl wrote still says what the proxy answered.
      stdout = (err as { stdout?: string }).stdout ?? '';
    }
    const at = stdout.lastIndexOf('\n');
    return { status: Number(stdout.slice(at + 1)), body: stdout.slice(0, at) };
  }

  test('deleted and recreated under the same name: the new certificate (same URI, new key) is never answered from the old one\'s entry; the old certificate is refused unknown actor once its entry expired', async () => {
    const name = 'actor-000';
    await stack.setPolicy(name, ALLOW_ALL);
    const old = await stack.certificate(name);
    assert.deepEqual(await through(long, old, echo.address), miss(200, 'ping', { getActor: 1, policy: 1 }));
    assert.deepEqual(await through(long, old, echo.address), hit(200, 'ping'));
    assert.deepEqual(await storing(short, () => through(short, old, echo.address)), miss(200, 'ping', { getActor: 1, policy: 1 }));

    assert.equal((await stack.stubAdmin('DELETE', `/actors/${ATESPACE}/${name}`)).status, 200);
    // While its verdict lives the old certificate is still answered from it (the lag the TTL bounds)...
    assert.deepEqual(await through(long, old, echo.address), hit(200, 'ping'));
    // ...and once it expired, the control plane is asked: the actor is gone. Not cached: asked again the next time.
    await short.untilExpired(old, echo.address);
    assert.deepEqual(await through(short, old, echo.address), miss(403, 'unknown actor', { getActor: 1, policy: 0 }));
    assert.deepEqual(await through(short, old, echo.address), miss(403, 'unknown actor', { getActor: 1, policy: 0 }));
    assert.deepEqual(await short.verdictsOf(old), []);

    assert.equal((await stack.stubAdmin('POST', `/actors/${ATESPACE}/${name}`)).status, 201);
    const fresh = await stack.certificate(name);
    assert.equal(fresh.uri, old.uri, 'the same identity');
    assert.notEqual(fresh.publicKey, old.publicKey, 'a new key');
    assert.notEqual(fresh.digest, old.digest);
    assert.equal((await stack.stubAdmin('GET', `/actors/${ATESPACE}/${name}/egress-policy`)).status, 404, 'the policy went with the deleted actor');

    const stale = (await long.verdictsOf(old)).find((v) => v.destination === echo.address);
    assert.equal(stale?.verdict, 'allow', 'the old certificate\'s allow is still live in the long-TTL proxy');
    // The recreated actor has no policy: had the old entry answered, this would be a tunnel.
    assert.deepEqual(await through(long, fresh, echo.address), miss(403, 'egress denied', { getActor: 1, policy: 1 }));
    assert.deepEqual(await through(short, fresh, echo.address), miss(403, 'egress denied', { getActor: 1, policy: 1 }));
    const listed = await long.verdictsOf(fresh);
    assert.deepEqual(listed.map((v) => [v.destination, v.verdict, v.outcome]), [[echo.address, 'deny', 'denied']], 'the new certificate has an entry of its own');
  });

  test('suspended: refused with its state once the cached allow expired, asked again each time (never cached); deleted: refused unknown actor', async () => {
    const name = 'actor-001';
    await stack.setPolicy(name, ALLOW_ALL);
    const cert = await stack.certificate(name);
    assert.deepEqual(await storing(short, () => through(short, cert, echo.address)), miss(200, 'ping', { getActor: 1, policy: 1 }));

    assert.equal((await stack.stubAdmin('POST', `/actors/${ATESPACE}/${name}/suspend`)).status, 200);
    await short.untilExpired(cert, echo.address);
    const notCached = (await short.cacheStats()).notCached.not_running;
    const suspended = 'actor is STATUS_SUSPENDED, not running';
    assert.deepEqual(await through(short, cert, echo.address), miss(403, suspended, { getActor: 1, policy: 0 }));
    assert.deepEqual(await through(short, cert, echo.address), miss(403, suspended, { getActor: 1, policy: 0 }));
    assert.equal((await short.cacheStats()).notCached.not_running - notCached, 2);
    assert.deepEqual(await short.verdictsOf(cert), []);

    // Resumed (a new activation, a new certificate), allowed and cached again; then deleted.
    const again = await stack.certificate(name);
    assert.deepEqual(await storing(short, () => through(short, again, echo.address)), miss(200, 'ping', { getActor: 1, policy: 1 }));
    assert.equal((await stack.stubAdmin('DELETE', `/actors/${ATESPACE}/${name}`)).status, 200);
    await short.untilExpired(again, echo.address);
    assert.deepEqual(await through(short, again, echo.address), miss(403, 'unknown actor', { getActor: 1, policy: 0 }));
    assert.deepEqual(await short.verdictsOf(again), []);
  });

  test('a policy denial is cached (a hit reads nothing from the control plane); a policy naming the destination opens it once the denial expired, and at once after DELETE /cache/egress?actor= — with curl over HTTP/1.1', async () => {
    const name = 'actor-002';
    const cert = await stack.certificate(name);
    const url = `http://${webAddress}/`;

    const denied = await measured(stack, long, () => curl(long, cert, url));
    assert.deepEqual(denied, miss(403, '', { getActor: 1, policy: 1 }), 'curl: CONNECT refused, no policy');
    const lines = (): Record<string, unknown>[] => long.handle.logs().filter((l) => l.msg === 'egress' && l.actor === `${ATESPACE}/${name}`);
    const summary = (l: Record<string, unknown>): unknown[] => [l.protocol, l.method, l.destination, l.status, l.outcome, l.cache];
    await waitFor(() => lines().length === 1, 5000, 'the refused CONNECT\'s access-log line');
    assert.deepEqual(summary(lines()[0] as Record<string, unknown>), ['http/1.1', 'CONNECT', webAddress, 403, 'denied', 'miss']);
    assert.deepEqual(await through(long, cert, webAddress), hit(403, 'egress denied'));
    const listed = (await long.verdictsOf(cert)).map((v) => [v.destination, v.verdict, v.status, v.outcome, v.hits]);
    assert.deepEqual(listed, [[webAddress, 'deny', 403, 'denied', 1]]);
    assert.deepEqual(await storing(short, () => through(short, cert, webAddress)), miss(403, 'egress denied', { getActor: 1, policy: 1 }));

    const port = Number(webAddress.slice(webAddress.lastIndexOf(':') + 1));
    await stack.setPolicy(name, { rules: [{ kind: 'cidrs', cidrs: ['127.0.0.1/32'], ports: [port] }] });
    // The long-TTL proxy still answers from its denial...
    assert.deepEqual(await through(long, cert, webAddress), hit(403, 'egress denied'));
    // ...until the actor's verdicts are evicted: then the next CONNECT asks, and is allowed.
    const evicted = await long.admin<{ evicted: number }>('DELETE', `/cache/egress?actor=${ATESPACE}/${name}`);
    assert.deepEqual([evicted.status, evicted.body.evicted], [200, 1]);
    const allowed = await measured(stack, long, () => curl(long, cert, url));
    assert.deepEqual(allowed, miss(200, 'hello from the destination', { getActor: 1, policy: 1 }), 'curl: through the tunnel');
    const tunnelled = await eventually(() => lines().find((l) => l.status === 200), 5000, 'the tunnel\'s access-log line');
    assert.deepEqual(summary(tunnelled), ['http/1.1', 'CONNECT', webAddress, 200, 'allowed', 'miss']);
    assert.deepEqual(await measured(stack, long, () => curl(long, cert, url)), hit(200, 'hello from the destination'));

    // The short-TTL proxy opens it once its denial expired, without an eviction.
    await short.untilExpired(cert, webAddress);
    assert.deepEqual(await measured(stack, short, () => curl(short, cert, url)), miss(200, 'hello from the destination', { getActor: 1, policy: 1 }));
    // Another port is still outside the policy.
    assert.deepEqual(await through(short, cert, echo.address), miss(403, 'egress denied', { getActor: 1, policy: 1 }));
  });
});
