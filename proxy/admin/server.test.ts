/** The admin server: /ready, /stats (the JSON contract), /stats/reset, /metrics; and draining. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { request } from 'undici';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import { BUILD_INFO } from '../../lib/build-info.js';
import { getJson, routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';

let ep: ScriptedExtProc;
let up: Upstream;
let proxy: InProcessTestProxy;
/** Responses to `/hold` wait here until the test releases them. */
const held: { end(body: string): void }[] = [];

describe('server', () => {
  before(async () => {
    up = await startUpstream((req, res) => {
      if (req.url === '/hold') held.push(res);
      else if (req.url === '/fail') res.writeHead(503).end('unavailable');
      else res.end('ok');
    });
    ep = await startScriptedExtProc(() => routeTo(up.address));
    proxy = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', ep.address] });
  });

  after(async () => {
    await proxy.stop();
    await ep.close();
    await up.close();
  });

  async function get(path: string, host = actorHost('a'), p = proxy): Promise<number> {
    const res = await request(`${p.ingress}${path}`, { headers: { host } });
    await res.body.text();
    return res.statusCode;
  }

  test('/stats has the contract shape and counts requests, ext_proc streams and upstream answers', async () => {
    await request(`${proxy.admin}/stats/reset`, { method: 'POST' }).then((r) => r.body.text());
    assert.equal(await get('/'), 200);
    assert.equal(await get('/', 'not-an-actor.example'), 200, 'the scripted ext_proc routes anything');
    const s = (await getJson(`${proxy.admin}/stats`)) as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(s), ['requests', 'extproc', 'upstream', 'cache', 'reruns', 'rerunAttempts', 'resolver', 'egress', 'tunnels', 'overload', 'filterOffload', 'internalErrors', 'process']);
    assert.deepEqual(s.requests, { total: 2, byStatus: { '1xx': 0, '2xx': 2, '3xx': 0, '4xx': 0, '5xx': 0 }, inFlight: 0 });
    assert.deepEqual(s.extproc, { streams: 2, active: 0, errors: 0, timeouts: 0, retries: { retried: 0, recovered: 0, budgetExhausted: 0, shed: 0, waiting: 0 } });
    assert.equal(s.upstream?.requests, 2);
    assert.deepEqual(s.upstream?.byStatus, { '1xx': 0, '2xx': 2, '3xx': 0, '4xx': 0, '5xx': 0 });
    assert.equal(s.upstream?.connectFailures, 0);
    assert.equal(s.upstream?.resets, 0);
    assert.equal(s.upstream?.resetsNotReplayable, 0);
    assert.equal(s.cache?.enabled, false);
    assert.equal((s.egress?.cache as { enabled?: unknown } | undefined)?.enabled, true, 'the egress verdict cache is on by default');
    assert.deepEqual(s.reruns, { stale: 0, connect: 0, reset: 0 });
    assert.deepEqual(s.rerunAttempts, { byAttempt: { '1': 0, '2': 0 }, backoffs: 0, cancelledInBackoff: 0, budgetExhausted: 0 });
    assert.deepEqual(s.resolver, { kind: 'extproc', resumeCalls: {}, flightJoins: 0 }, 'the same shape as the apiserver resolver');
    const noTunnels = { active: 0, total: 0, refused: 0, bytes: { fromClient: 0, toClient: 0 }, closed: { client: 0, upstream: 0, idle: 0, drain: 0, internal: 0 } };
    assert.deepEqual(s.tunnels, { upgrade: noTunnels, connect: noTunnels });
    assert.deepEqual(Object.values(s.internalErrors ?? {}), new Array(Object.keys(s.internalErrors ?? {}).length).fill(0), 'no contained error');
    assert.ok('h2-stream' in (s.internalErrors ?? {}) && 'upstream-response' in (s.internalErrors ?? {}), 'every place is listed');
    for (const k of ['cpuUserUs', 'cpuSystemUs', 'rssBytes', 'maxRssBytes']) assert.equal(typeof s.process?.[k], 'number', k);

    const reset = await request(`${proxy.admin}/stats/reset`, { method: 'POST' });
    assert.equal(reset.statusCode, 200);
    const fresh = (await reset.body.json()) as Record<string, Record<string, unknown>>;
    assert.deepEqual(Object.keys(fresh), ['requests', 'extproc', 'upstream', 'cache', 'reruns', 'rerunAttempts', 'resolver', 'egress', 'tunnels', 'overload', 'filterOffload', 'internalErrors', 'process'], 'the reset answers the fresh /stats');
    assert.equal(fresh.requests?.total, 0);
    assert.deepEqual(fresh.reruns, { stale: 0, connect: 0, reset: 0 });
    assert.deepEqual(fresh.rerunAttempts, { byAttempt: { '1': 0, '2': 0 }, backoffs: 0, cancelledInBackoff: 0, budgetExhausted: 0 });
    const zero = (await getJson(`${proxy.admin}/stats`)) as Record<string, Record<string, unknown>>;
    assert.equal(zero.requests?.total, 0);
    assert.equal(zero.extproc?.streams, 0);
  });

  test('/metrics exposes the proxy metrics with fixed labels only, one name scheme, build info and the ext_proc round trips', async () => {
    assert.equal(await get('/?x=1', actorHost('some-client-chosen-name')), 200);
    const res = await request(`${proxy.admin}/metrics`);
    assert.equal(res.statusCode, 200);
    const text = await res.body.text();
    assert.match(text, /^actor_edge_proxy_extproc_streams_total \d+/m);
    assert.match(text, /^actor_edge_proxy_extproc_streams_active 0$/m);
    assert.match(text, /^actor_edge_proxy_requests_total\{code="200"\} \d+/m);
    assert.match(text, /^actor_edge_proxy_request_duration_seconds_bucket\{le="0.005",cache="none",protocol="http\/1.1"\} \d+$/m);
    assert.match(text, /^actor_edge_proxy_request_duration_seconds_count\{cache="none",protocol="http\/1.1"\} [1-9]\d*$/m, 'the cache is off: every request is timed as cache="none"');
    assert.doesNotMatch(text, /^actor_edge_proxy_request_duration_seconds_count\{cache="(hit|miss|rerun)"/m);
    assert.match(text, /^actor_edge_proxy_reruns_total\{reason="stale"\} 0/m);
    assert.match(text, new RegExp(`^actor_edge_proxy_build_info\\{version="${BUILD_INFO.version.replace(/\./g, '\\.')}",node_version="${process.versions.node.replace(/\./g, '\\.')}"\\} 1$`, 'm'));
    // One request through the scripted ext_proc: one request_headers message answered.
    assert.match(text, /^actor_edge_proxy_extproc_round_trip_seconds_count\{message="request_headers",result="response"\} [1-9]\d*$/m);
    assert.match(text, /^actor_edge_proxy_extproc_round_trip_seconds_bucket\{le="30",message="request_headers",result="response"\} [1-9]\d*$/m);
    assert.match(text, /^actor_edge_proxy_reruns_by_attempt_total\{attempt="1"\} 0$/m, 're-runs by attempt have samples (0) for every reachable attempt');
    assert.match(text, /^actor_edge_proxy_reruns_by_attempt_total\{attempt="2"\} 0$/m);
    assert.doesNotMatch(text, /reruns_by_attempt_total\{attempt="3"\}/, 'not beyond --max-reruns');
    assert.doesNotMatch(text, /some-client-chosen-name/);
    for (const line of text.split('\n')) {
      const name = /^(?:# (?:HELP|TYPE) )?([a-z_:][a-z0-9_:]*)/.exec(line)?.[1];
      if (name !== undefined) assert.match(name, /^(actor_edge_proxy_|process_|nodejs_)/, `${name}: one prefix`);
    }
  });

  test('/live, /ready, GET / and unknown routes; state-changing admin calls are refused or allowed by the guard as before', async () => {
    const live = await request(`${proxy.admin}/live`);
    assert.deepEqual([live.statusCode, await live.body.text()], [200, 'LIVE\n']);
    const index = (await getJson(`${proxy.admin}/`)) as { component: string; endpoints: { method: string; path: string }[] };
    assert.equal(index.component, 'proxy');
    const listed = index.endpoints.map((e) => `${e.method} ${e.path}`);
    for (const e of ['GET /ready', 'GET /live', 'GET /stats', 'POST /stats/reset', 'GET /metrics', 'GET /stats/history', 'GET /upstreams', 'POST /filters/reload', 'GET /dashboard',
      'GET /cache', 'GET /cache/:atespace/:name', 'DELETE /cache', 'DELETE /cache/:atespace/:name']) {
      assert.ok(listed.includes(e), e);
    }
    for (const path of ['/config_dump', '/clusters', '/cache/demo']) {
      const res = await request(`${proxy.admin}${path}`);
      assert.equal(res.statusCode, 404, path);
      const body = (await res.body.json()) as Record<string, unknown>;
      assert.deepEqual(Object.keys(body).sort(), ['code', 'error'], path);
      assert.equal(body.code, 'ROUTE_NOT_FOUND', path);
    }
  });

  test('GET /upstreams lists attempts and failures per worker, as the router reports them', async () => {
    type Upstreams = { maxWorkers: number; workers: { worker: string; requests: number; errors: Record<string, number>; idleMs: number }[] };
    const before = ((await getJson(`${proxy.admin}/upstreams`)) as Upstreams).workers[0];
    assert.equal(await get('/fail'), 503);
    assert.equal(await get('/'), 200);
    const body = (await getJson(`${proxy.admin}/upstreams`)) as Upstreams;
    assert.equal(body.maxWorkers, 64);
    assert.equal(body.workers.length, 1, 'one upstream');
    const [w] = body.workers;
    assert.equal(w?.requests, (before?.requests ?? 0) + 2);
    assert.equal(w?.errors['5xx'], (before?.errors['5xx'] ?? 0) + 1, 'the worker\'s 503 is its error');
    assert.equal(w?.errors.stale, 0);
  });

  test('draining: /ready turns 503, in-flight requests finish, then the proxy stops', async () => {
    const p = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'off', '--access-log', 'off', '--extproc', ep.address, '--drain-timeout-ms', '5000'] });
    const ready = await request(`${p.admin}/ready`);
    assert.equal(ready.statusCode, 200);
    assert.equal(await ready.body.text(), 'LIVE\n');
    const inflight = request(`${p.ingress}/hold`, { headers: { host: actorHost('a') } });
    await waitFor(() => held.length === 1, 10_000, 'the held request to reach the upstream');
    const stopped = p.stop();
    const during = await request(`${p.admin}/ready`);
    assert.equal(during.statusCode, 503);
    assert.equal(await during.body.text(), 'DRAINING\n');
    (held.shift() as { end(body: string): void }).end('ok'); // still in flight until now
    const res = await inflight;
    assert.equal(res.statusCode, 200);
    assert.equal(await res.body.text(), 'ok');
    await stopped;
    await assert.rejects(request(`${p.ingress}/`, { headers: { host: actorHost('a') } }));
  });
});
