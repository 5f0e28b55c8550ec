/**
 * extproc driven the way Envoy drives it (values only in raw_value, protocol_config first, response_headers after a
 * CONTINUE, then half-close and cancel), against a scripted ateapi.Control double started in this test.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { waitFor } from '../lib/testing/wait.js';
import { Writable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { readFlags } from '../lib/flags.js';
import { freePort } from '../lib/loopback.js';
import { metricValue } from '../lib/testing/scrape.js';
import { startScriptedControl, type ScriptAnswer, type ScriptedControl } from '../lib/resume/testing/scripted-control.js';
import { buildConfig, EXTPROC_FLAGS } from './config.js';
import { startExtproc, type RunningExtproc } from './server.js';
import { EnvoyLikeClient, verdictOf, type ExtProcVerdict } from './testing/envoy-like-client.js';

const SUFFIX = 'actors.resources.substrate.ate.dev';
const host = (name: string, atespace = 'team-a', port?: number): string => `${name}.${atespace}.${SUFFIX}${port ? `:${port}` : ''}`;

const logLines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, cb) {
    for (const line of chunk.toString('utf8').split('\n')) if (line) logLines.push(JSON.parse(line) as Record<string, unknown>);
    cb();
  },
});
const log = pino({ level: 'debug' }, sink);

let control: ScriptedControl;
const started: { extproc: RunningExtproc; client: EnvoyLikeClient }[] = [];

/** Per-actor-name answers; names not listed are RUNNING on 10.0.0.1. Gates let a test hold a call open. */
function script(byName: Record<string, (index: number) => ScriptAnswer | Promise<ScriptAnswer>>): void {
  const perName = new Map<string, number>();
  control.script = (req) => {
    const name = req.actor_ref.name;
    const n = perName.get(name) ?? 0;
    perName.set(name, n + 1);
    const f = byName[name];
    return f ? f(n) : { kind: 'ok', ip: '10.0.0.1' };
  };
}

function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}


async function start(args: string[] = []): Promise<{ extproc: RunningExtproc; client: EnvoyLikeClient }> {
  const { values } = readFlags(EXTPROC_FLAGS, ['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--apiserver', control.address, ...args], {});
  const extproc = await startExtproc(buildConfig(values), log);
  const s = { extproc, client: new EnvoyLikeClient(extproc.grpcAddress) };
  started.push(s);
  return s;
}

let plain: { extproc: RunningExtproc; client: EnvoyLikeClient };

describe('server', () => {
  before(async () => {
    control = await startScriptedControl();
    plain = await start();
  });

  after(async () => {
    for (const s of started) {
      s.client.close();
      await s.extproc.close();
    }
    await control.close();
  });

  function callsFor(name: string): number {
    return control.calls.filter((c) => c.request.actor_ref.name === name).length;
  }

  function assertImmediate(v: ExtProcVerdict, status: number, body: string): void {
    assert.equal(v.kind, 'immediate', JSON.stringify(v));
    if (v.kind !== 'immediate') return;
    assert.equal(v.status, status, v.body);
    assert.equal(v.body, body);
    assert.deepEqual(v.headers['content-type'], { rawValue: 'text/plain', value: '', append: false });
  }

  test('success: x-ate-target-port overwritten via raw_value, original_dst metadata with string values', async () => {
    script({ 'counter-7': () => ({ kind: 'ok', ip: '10.1.2.3' }) });
    const { verdict, responses } = await plain.client.process({ authority: host('counter-7', 'team-a', 9090) });
    assert.deepEqual(verdict, {
      kind: 'continue',
      setHeaders: { 'x-ate-target-port': { rawValue: '9090', value: '', append: false } },
      removeHeaders: [],
      metadata: { 'envoy.filters.listener.original_dst': { local: '10.1.2.3:8443', port: '9090' } },
      clearRouteCache: false,
    });
    assert.equal(responses.length, 2);
    assert.equal(responses[1]!.response, 'response_headers');
    const last = control.calls.at(-1)!;
    assert.deepEqual(last.request.actor_ref, { atespace: 'team-a', name: 'counter-7' });
    // Struct values are really strings on the wire (not numbers), under the namespace key.
    const md = (responses[0] as { dynamic_metadata: { fields: Record<string, { structValue: { fields: Record<string, { kind: string }> } }> } }).dynamic_metadata;
    const ns = md.fields['envoy.filters.listener.original_dst']!.structValue.fields;
    assert.equal(ns.local!.kind, 'stringValue');
    assert.equal(ns.port!.kind, 'stringValue');
  });

  test('default port 80, IPv6 workers in brackets, --worker-port honoured', async () => {
    const other = await start(['--worker-port', '9443']);
    script({ v6: () => ({ kind: 'ok', ip: 'fd00::17' }) });
    const a = await plain.client.process({ authority: host('v6') });
    assert.equal(a.verdict.kind === 'continue' && a.verdict.metadata['envoy.filters.listener.original_dst']?.local, '[fd00::17]:8443');
    assert.equal(a.verdict.kind === 'continue' && a.verdict.setHeaders['x-ate-target-port']?.rawValue, '80');
    const b = await other.client.process({ authority: host('v6', 'team-a', 8080) });
    assert.deepEqual(b.verdict.kind === 'continue' && b.verdict.metadata['envoy.filters.listener.original_dst'], { local: '[fd00::17]:9443', port: '8080' });
  });

  test('answers for one worker but different target ports stay distinct', async () => {
    script({ ports: () => ({ kind: 'ok', ip: '10.0.0.44' }) });
    for (const port of [8080, 9090, 8080, 80]) {
      const { verdict } = await plain.client.process({ authority: host('ports', 'team-a', port === 80 ? undefined : port) });
      assert.deepEqual(verdict.kind === 'continue' && verdict.metadata['envoy.filters.listener.original_dst'], { local: '10.0.0.44:8443', port: String(port) });
      assert.equal(verdict.kind === 'continue' && verdict.setHeaders['x-ate-target-port']?.rawValue, String(port));
    }
  });

  test('graceful close: the server ends the RPC with OK as soon as the data plane half-closes', async () => {
    script({});
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => plain.client.process({ authority: host(`graceful-${i % 4}`), close: 'graceful' })));
    assert.equal(results.filter((r) => r.verdict.kind === 'continue').length, 20);
    const skipResponse = await plain.client.process({ authority: host('graceful-0'), close: 'graceful', sendResponseHeaders: false });
    assert.equal(skipResponse.responses.length, 1);
  });

  test('authority from host when :authority is absent; values from value when raw_value is empty', async () => {
    script({});
    const viaHost = await plain.client.process({ headers: { host: host('via-host') } });
    assert.equal(viaHost.verdict.kind, 'continue');
    const legacy = await plain.client.process({ authority: host('legacy'), legacyValues: true });
    assert.equal(legacy.verdict.kind, 'continue');
    assert.equal(callsFor('via-host'), 1);
    assert.equal(callsFor('legacy'), 1);
  });

  test('invalid hosts are answered 404 without calling the control plane; ASCII upper case is folded', async () => {
    script({});
    const before = control.calls.length;
    const invalid = [
      '',
      'counter-7.team-a.example.com',
      `x.counter-7.team-a.${SUFFIX}`,
      `cöunter.team-a.${SUFFIX}`,
      `${'a'.repeat(64)}.team-a.${SUFFIX}`,
      `counter-7.team-a.${SUFFIX}:0`,
      `counter-7.team-a.${SUFFIX}:65536`,
      `counter-7.team-a.${SUFFIX}:http`,
      `-bad.team-a.${SUFFIX}`,
      SUFFIX,
    ];
    for (const authority of invalid) {
      const { verdict } = await plain.client.process({ authority });
      assertImmediate(verdict, 404, `invalid host ${JSON.stringify(authority)}`);
    }
    const none = await plain.client.process({});
    assertImmediate(none.verdict, 404, 'invalid host ""');
    assert.equal(control.calls.length, before, 'no ResumeActor for an invalid host');

    const upper = await plain.client.process({ authority: `Counter-7.TEAM-A.Actors.Resources.Substrate.ATE.dev.:8080` });
    assert.equal(upper.verdict.kind, 'continue');
    assert.deepEqual(control.calls.at(-1)!.request.actor_ref, { atespace: 'team-a', name: 'counter-7' });
    const ok63 = await plain.client.process({ authority: `${'a'.repeat(63)}.team-a.${SUFFIX}` });
    assert.equal(ok63.verdict.kind, 'continue');
  });

  test('every resume error maps to its HTTP answer, unknown errors without details', async () => {
    const cases: [string, ScriptAnswer, number, string][] = [
      ['e-notfound', { kind: 'error', code: grpc.status.NOT_FOUND, details: 'actor not found' }, 404, 'actor team-a/e-notfound not found'],
      ['e-precond', { kind: 'error', code: grpc.status.FAILED_PRECONDITION, details: 'actor is deleting' }, 503, 'actor team-a/e-precond unavailable: actor is deleting'],
      ['e-deadline', { kind: 'error', code: grpc.status.DEADLINE_EXCEEDED, details: 'slow' }, 504, 'actor team-a/e-deadline request timed out'],
      ['e-denied', { kind: 'error', code: grpc.status.PERMISSION_DENIED, details: 'policy p-1' }, 403, 'actor team-a/e-denied access denied'],
      ['e-unauth', { kind: 'error', code: grpc.status.UNAUTHENTICATED, details: 'no token' }, 401, 'actor team-a/e-unauth authentication required'],
      ['e-exhausted', { kind: 'error', code: grpc.status.RESOURCE_EXHAUSTED, details: 'no free workers available' }, 503, 'actor team-a/e-exhausted unavailable: no free workers available'],
      ['e-internal', { kind: 'error', code: grpc.status.INTERNAL, details: 'pq: secret-dsn refused' }, 500, 'error resuming actor team-a/e-internal'],
      ['e-unknown', { kind: 'error', code: grpc.status.UNKNOWN, details: 'panic secret' }, 500, 'error resuming actor team-a/e-unknown'],
      ['e-suspended', { kind: 'ok', ip: '10.0.0.1', status: 'STATUS_SUSPENDED' }, 500, 'actor team-a/e-suspended routing failed'],
      ['e-badip', { kind: 'ok', ip: 'not-an-ip' }, 500, 'actor team-a/e-badip routing failed'],
      ['e-noip', { kind: 'ok', ip: '' }, 500, 'actor team-a/e-noip routing failed'],
    ];
    script(Object.fromEntries(cases.map(([name, answer]) => [name, () => answer])));
    for (const [name, , status, body] of cases) {
      const { verdict } = await plain.client.process({ authority: host(name) });
      assertImmediate(verdict, status, body);
      assert.equal(callsFor(name), 1, `${name}: not retried without parking`);
    }
  });

  test("UNAVAILABLE is retried within the data plane's budget, then answered 503 with it; a flight that recovers serves 200", async () => {
    const down: ScriptAnswer = { kind: 'error', code: grpc.status.UNAVAILABLE, details: 'db down' };
    let up = false;
    script({ 'e-unavail': () => down, 'blip': () => (up ? { kind: 'ok', ip: '10.0.0.21' } : down) });
    const before = plain.extproc.metrics.stats();
    const started = Date.now();
    const { verdict } = await plain.client.process({ authority: host('e-unavail'), metadata: { 'actor-edge-resume-budget-ms': '400' } });
    assertImmediate(verdict, 503, 'actor team-a/e-unavail unavailable');
    // Answered once no retry could start within the 400 ms (the backoff starts at 100 ms): retried, then at the budget.
    assert.ok(callsFor('e-unavail') >= 2, `${callsFor('e-unavail')} calls`);
    assert.ok(Date.now() - started >= 400 - 200, 'it waited for retries within the budget');
    let after = plain.extproc.metrics.stats();
    assert.equal((after.resumeRetries.UNAVAILABLE ?? 0) - (before.resumeRetries.UNAVAILABLE ?? 0), callsFor('e-unavail') - 1);
    assert.equal(after.outOfBudget - before.outOfBudget, 1);
    // The control plane comes back while a request waits: it is served.
    const waiting = plain.client.process({ authority: host('blip'), metadata: { 'actor-edge-resume-budget-ms': '5000' } });
    await waitFor(() => callsFor('blip') >= 2, 5000, 'a retry of the blip');
    up = true;
    const served = await waiting;
    assert.equal(served.verdict.kind === 'continue' && served.verdict.metadata['envoy.filters.listener.original_dst']?.local, '10.0.0.21:8443');
    after = plain.extproc.metrics.stats();
    assert.equal(after.parked.active, 0);
  });

  test('ABORTED is retried to success', async () => {
    script({ aborted: (n) => (n < 2 ? { kind: 'error', code: grpc.status.ABORTED, details: 'another operation is in progress for this actor' } : { kind: 'ok', ip: '10.0.0.5' }) });
    const { verdict } = await plain.client.process({ authority: host('aborted') });
    assert.equal(verdict.kind === 'continue' && verdict.metadata['envoy.filters.listener.original_dst']?.local, '10.0.0.5:8443');
    assert.equal(callsFor('aborted'), 3);
  });

  test('budget exhausted while ABORTED: 503 with the real description', async () => {
    // The first call answers ABORTED at once; the retry (after ~100 ms of backoff) is held until the budget is
    // spent, so exactly two calls are made whatever the machine's speed (the retry starts ~500 ms before the end).
    const short = await start(['--resume-budget-ms', '600']);
    const held = gate();
    const aborted: ScriptAnswer = { kind: 'error', code: grpc.status.ABORTED, details: 'another operation is in progress for this actor' };
    script({ locked: async (n) => (n === 0 ? aborted : (await held.promise, aborted)) });
    const { verdict } = await short.client.process({ authority: host('locked') });
    assertImmediate(verdict, 503, 'actor team-a/locked unavailable: another operation is in progress for this actor');
    assert.equal(callsFor('locked'), 2);
    held.open();
  });

  test('budget exhausted with no answer: 504, and the ResumeActor call is not cancelled', async () => {
    const short = await start(['--resume-budget-ms', '200']);
    const g = gate();
    script({ hung: async () => (await g.promise, { kind: 'ok', ip: '10.0.0.1' }) });
    const { verdict } = await short.client.process({ authority: host('hung') });
    assertImmediate(verdict, 504, 'actor team-a/hung request timed out');
    const call = control.calls.find((c) => c.request.actor_ref.name === 'hung')!;
    assert.equal(call.cancelled, false);
    g.open();
    await waitFor(() => call.answered, 5000, 'the call to be answered');
    assert.equal(call.cancelled, false);
  });

  test('a caller that goes away does not cancel the resume; others are served; the next request calls again', async () => {
    const g = gate();
    script({ slow: async (n) => (n === 0 ? await g.promise : undefined, { kind: 'ok', ip: '10.0.0.8' }) });
    const abort = new AbortController();
    const leaving = plain.client.process({ authority: host('slow'), signal: abort.signal }).catch((e: Error) => e);
    await waitFor(() => callsFor('slow') === 1, 5000, 'the ResumeActor call');
    const joinsBefore = plain.extproc.metrics.stats().flightJoins;
    const staying = plain.client.process({ authority: host('slow') });
    await waitFor(() => plain.extproc.metrics.stats().flightJoins === joinsBefore + 1, 5000, 'the second request to join');
    const cancelledBefore = plain.extproc.metrics.stats().requests.cancelled ?? 0;
    abort.abort();
    assert.ok((await leaving) instanceof Error);
    await waitFor(() => (plain.extproc.metrics.stats().requests.cancelled ?? 0) === cancelledBefore + 1, 5000, 'the cancelled request to be counted');
    g.open();
    const served = await staying;
    assert.equal(served.verdict.kind === 'continue' && served.verdict.metadata['envoy.filters.listener.original_dst']?.local, '10.0.0.8:8443');
    const first = control.calls.find((c) => c.request.actor_ref.name === 'slow')!;
    assert.equal(first.cancelled, false);
    await plain.client.process({ authority: host('slow') });
    assert.equal(callsFor('slow'), 2, 'forgotten on completion');
  });

  test('100 concurrent requests for one actor: one ResumeActor, 100 successes', async () => {
    const g = gate();
    script({ popular: async () => (await g.promise, { kind: 'ok', ip: '10.0.0.100' }) });
    const joinsBefore = plain.extproc.metrics.stats().flightJoins;
    const all = Array.from({ length: 100 }, () => plain.client.process({ authority: host('popular') }));
    await waitFor(() => plain.extproc.metrics.stats().flightJoins - joinsBefore === 99, 5000, '99 joins');
    g.open();
    const results = await Promise.all(all);
    assert.equal(results.filter((r) => r.verdict.kind === 'continue' && r.verdict.metadata['envoy.filters.listener.original_dst']?.local === '10.0.0.100:8443').length, 100);
    assert.equal(callsFor('popular'), 1);
  });

  test('parking off: no free workers fails fast; parking on: retried to success', async () => {
    const parking = await start(['--parking', 'on', '--park-budget-ms', '3000']);
    const busy = (n: number): ScriptAnswer => (n < 2 ? { kind: 'error', code: grpc.status.RESOURCE_EXHAUSTED, details: 'no free workers available' } : { kind: 'ok', ip: '10.0.0.9' });
    script({ 'busy-off': busy, 'busy-on': busy, 'down-on': (n) => (n < 1 ? { kind: 'error', code: grpc.status.UNAVAILABLE, details: 'x' } : { kind: 'ok', ip: '10.0.0.9' }) });
    assertImmediate((await plain.client.process({ authority: host('busy-off') })).verdict, 503, 'actor team-a/busy-off unavailable: no free workers available');
    assert.equal(callsFor('busy-off'), 1);
    assert.equal((await parking.client.process({ authority: host('busy-on') })).verdict.kind, 'continue');
    assert.equal(callsFor('busy-on'), 3);
    assert.equal((await parking.client.process({ authority: host('down-on') })).verdict.kind, 'continue');
    assert.equal(parking.extproc.metrics.stats().parked.active, 0);
  });

  test('parking on, budget exhausted: the real status (503 no free workers available)', async () => {
    // As above: one refusal at once, then a retry held past the budget, so exactly two calls.
    const parking = await start(['--parking', 'on', '--park-budget-ms', '600']);
    const held = gate();
    const full: ScriptAnswer = { kind: 'error', code: grpc.status.RESOURCE_EXHAUSTED, details: 'no free workers available' };
    script({ full: async (n) => (n === 0 ? full : (await held.promise, full)) });
    assertImmediate((await parking.client.process({ authority: host('full') })).verdict, 503, 'actor team-a/full unavailable: no free workers available');
    assert.equal(callsFor('full'), 2);
    held.open();
  });

  test('parking on, a full lot answers 503 at once; running actors are still served', async () => {
    const parking = await start(['--parking', 'on', '--parked-max', '1', '--park-budget-ms', '5000']);
    let capacity = false;
    const exhausted: ScriptAnswer = { kind: 'error', code: grpc.status.RESOURCE_EXHAUSTED, details: 'no free workers available' };
    script({ 'lot-a': () => (capacity ? { kind: 'ok', ip: '10.0.0.10' } : exhausted), 'lot-b': () => (capacity ? { kind: 'ok', ip: '10.0.0.11' } : exhausted) });
    const a = parking.client.process({ authority: host('lot-a', 'ns') });
    await waitFor(() => parking.extproc.metrics.stats().parked.active === 1, 5000, 'the first request to park');
    const b = await parking.client.process({ authority: host('lot-b', 'ns') });
    assertImmediate(b.verdict, 503, 'actor "ns/lot-b" unavailable: router at capacity');
    assert.equal(parking.extproc.metrics.stats().parked.rejected, 1);
    assert.equal((await parking.client.process({ authority: host('lot-c', 'ns') })).verdict.kind, 'continue');
    capacity = true;
    assert.equal((await a).verdict.kind, 'continue');
    await waitFor(() => parking.extproc.flights.inFlight === 0, 5000, 'the detached flight for lot-b to finish');
    assert.equal(parking.extproc.metrics.stats().parked.active, 0);
  });

  test('control plane unreachable: retried within the budget, then 503 (not a timeout), with and without parking', async () => {
    const port = await freePort();
    const make = async (args: string[]) => {
      const { values } = readFlags(EXTPROC_FLAGS, ['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--apiserver', `127.0.0.1:${port}`, ...args], {});
      const extproc = await startExtproc(buildConfig(values), log);
      const s = { extproc, client: new EnvoyLikeClient(extproc.grpcAddress) };
      started.push(s);
      return s;
    };
    // A budget ending with a retryable error answers that error (503), never 504 "request timed out". A closed port
    // refuses at machine speed, so how many retries fit in the budget cannot be exact: at least one, and no more than
    // the backoff allows (waits of 100, 110, 121, 133 ms, growing by a tenth: at most five calls in 500 ms).
    for (const args of [['--resume-budget-ms', '500'], ['--parking', 'on', '--park-budget-ms', '500']]) {
      const extproc = await make(args);
      assertImmediate((await extproc.client.process({ authority: host('down') })).verdict, 503, 'actor team-a/down unavailable');
      const calls = extproc.extproc.metrics.stats().resumeCalls.UNAVAILABLE ?? 0;
      assert.ok(calls >= 2 && calls <= 5, `${args.join(' ')}: retried within the budget: ${calls} calls`);
    }
    // The data plane's own budget (here none left) answers at the first refusal.
    const bounded = await make([]);
    assertImmediate((await bounded.client.process({ authority: host('down'), metadata: { 'actor-edge-resume-budget-ms': '0' } })).verdict, 503, 'actor team-a/down unavailable');
    assert.equal(bounded.extproc.metrics.stats().resumeCalls.UNAVAILABLE, 1);
  });

  test('a stream carries several messages, each answered in order; half-close ends the RPC with OK', async () => {
    const g = gate();
    script({ multi: async () => (await g.promise, { kind: 'ok', ip: '10.0.0.12' }) });
    const { call, reader } = plain.client.open();
    const status = new Promise<grpc.StatusObject>((r) => call.on('status', r));
    const hv = (key: string, value: string) => ({ key, raw_value: Buffer.from(value) });
    call.write(EnvoyLikeClient.requestHeadersMessage({ authority: host('multi'), method: 'POST' }));
    // Pipelined before the headers are answered: must be answered after them, in order.
    call.write({ request_body: { body: Buffer.from('hello'), end_of_stream: false } });
    call.write({ request_body: { body: Buffer.from(' world'), end_of_stream: true } });
    call.write({ request_trailers: { trailers: { headers: [hv('x-checksum', 'abc')] } } });
    g.open();
    const first = await reader.next();
    assert.equal(verdictOf(first).kind, 'continue');
    assert.equal((await reader.next()).response, 'request_body');
    assert.equal((await reader.next()).response, 'request_body');
    assert.equal((await reader.next()).response, 'request_trailers');
    call.write({ response_headers: { headers: { headers: [hv(':status', '200')] } } });
    assert.equal((await reader.next()).response, 'response_headers');
    call.write({ response_body: { body: Buffer.from('ok'), end_of_stream: true } });
    const rb = await reader.next();
    assert.equal(rb.response, 'response_body');
    assert.equal(rb.response_body.response.status, 'CONTINUE');
    call.write({ response_trailers: { trailers: { headers: [] } } });
    assert.equal((await reader.next()).response, 'response_trailers');
    call.end();
    assert.equal((await status).code, grpc.status.OK);
  });

  test('a message with no request set ends the stream with INVALID_ARGUMENT', async () => {
    const { call } = plain.client.open();
    const status = new Promise<grpc.StatusObject>((r) => call.on('status', r));
    call.write({ metadata_context: {} });
    assert.equal((await status).code, grpc.status.INVALID_ARGUMENT);
  });

  test('admin: /ready, /stats counts and reset, /metrics without actor names and with lifetime counters', async () => {
    const fresh = await start();
    const base = `http://${fresh.extproc.adminAddress}`;
    const ready = await fetch(`${base}/ready`);
    assert.equal(ready.status, 200);
    assert.equal(await ready.text(), 'LIVE\n');
    script({
      'counter-7': () => ({ kind: 'ok', ip: '10.0.0.7' }),
      contended: (n) => (n === 0 ? { kind: 'error', code: grpc.status.ABORTED, details: 'busy' } : { kind: 'ok', ip: '10.0.0.7' }),
      missing: () => ({ kind: 'error', code: grpc.status.NOT_FOUND, details: 'no such actor' }),
    });
    for (const authority of [host('counter-7'), host('counter-7'), host('contended'), host('missing'), 'not an actor host']) {
      await fresh.client.process({ authority });
    }
    await waitFor(() => fresh.extproc.metrics.stats().streams.active === 0, 5000, 'streams to close');
    const stats = (await (await fetch(`${base}/stats`)).json()) as Record<string, any>;
    assert.deepEqual(Object.keys(stats).sort(), ['egress', 'flightJoins', 'outOfBudget', 'parked', 'process', 'requests', 'resumeCalls', 'resumeRetries', 'streams']);
    assert.deepEqual(stats.streams, { total: 5, active: 0, idleTimeouts: 0 });
    assert.deepEqual([stats.requests.ok, stats.requests.invalid_host, stats.requests.not_found], [3, 1, 1]);
    assert.deepEqual([stats.resumeCalls.OK, stats.resumeCalls.ABORTED, stats.resumeCalls.NOT_FOUND], [3, 1, 1]);
    assert.deepEqual(stats.parked, { active: 0, rejected: 0 });
    assert.deepEqual([stats.resumeRetries, stats.outOfBudget], [{ ABORTED: 1 }, 0]);
    assert.ok(stats.process.cpuUserUs > 0 && stats.process.rssBytes > 0, 'process usage is read (any positive amount)');

    const scrape = async (): Promise<string> => (await fetch(`${base}/metrics`)).text();
    const metrics = await scrape();
    for (const name of ['actor_edge_extproc_streams_total', 'actor_edge_extproc_streams_active', 'actor_edge_extproc_requests_total', 'actor_edge_extproc_route_duration_seconds_bucket',
      'actor_edge_extproc_resume_calls_total', 'actor_edge_extproc_flight_joins_total', 'actor_edge_extproc_parking_active', 'actor_edge_extproc_parking_rejected_total',
      'actor_edge_extproc_ready 1']) {
      assert.ok(metrics.includes(name), name);
    }
    assert.ok(metrics.includes('le="0.0025"') && metrics.includes('le="30"'), 'route-duration buckets');
    assert.ok(!metrics.includes('counter-7') && !metrics.includes('team-a'), 'no client-supplied names in labels');
    assert.equal(metricValue(metrics, 'actor_edge_extproc_requests_total{outcome="ok"}'), 3);
    assert.equal(metricValue(metrics, 'actor_edge_extproc_streams_total'), 5);

    const reset = await fetch(`${base}/stats/reset`, { method: 'POST' });
    assert.equal(reset.status, 200);
    const answered = (await reset.json()) as Record<string, any>;
    assert.deepEqual(Object.keys(answered).sort(), Object.keys(stats).sort(), 'the reset answers the fresh /stats document');
    assert.equal(answered.streams.total, 0);
    const zero = (await (await fetch(`${base}/stats`)).json()) as Record<string, any>;
    assert.equal(zero.streams.total, 0);
    assert.equal(zero.requests.ok, 0);
    assert.equal(zero.flightJoins, 0);
    assert.equal(zero.resumeCalls.OK, 0);
    // Scraped after the reset: Prometheus counters are lifetime counters, /stats/reset does not touch them.
    const afterReset = await scrape();
    assert.equal(metricValue(afterReset, 'actor_edge_extproc_requests_total{outcome="ok"}'), 3);
    assert.equal(metricValue(afterReset, 'actor_edge_extproc_streams_total'), 5);
  });

  test('Envoy\'s half-close + cancel is not logged as an error', () => {
    const bad = logLines.filter((l) => (l.level as number) >= 50 || l.msg === 'ext_proc stream error');
    assert.deepEqual(bad, []);
  });
});
