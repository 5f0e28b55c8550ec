/**
 * extproc's egress mode in front of a real apiserver-stub (both in the test's process, from the flags their processes
 * take), driven with CONNECTs as the proxy's egress listener sends them: actor certificates from a development CA,
 * policies set through the stub's admin API, every outcome of lib/egress/wire.ts, and the cost of each CONNECT in
 * control-plane reads (one GetActor, one GetActorEgressPolicy: extproc keeps no cache).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EGRESS_METADATA_NAMESPACE, EGRESS_OUTCOMES, egressOutcomeOf, type EgressOutcome } from '../lib/egress/wire.js';
import type { InProcessComponent } from '../lib/testing/component.js';
import { eventually } from '../lib/testing/wait.js';
import { workerNet } from '../lib/loopback.js';
import { createActorCa, mintActorCertificate } from '../lib/tls/actor-certs.js';
import { actorCertFixtures, type ActorCertFixtures, type BadActorCert } from '../lib/tls/testing/actor-certs.js';
import { startStubInProcess } from '../apiserver-stub/testing/in-process.js';
import { controlClient } from '../apiserver-stub/testing/clients.js';
import type * as api from '../apiserver-stub/ateapi-types.js';
import { startExtprocInProcess } from './testing/in-process.js';
import { EnvoyLikeClient, type ExtProcVerdict } from './testing/envoy-like-client.js';
import { egressConnect, firstCertificate } from './testing/egress-connect.js';

let stub: InProcessComponent;
let extproc: InProcessComponent;
let client: EnvoyLikeClient;
let dir: string;
let fixtures: ActorCertFixtures;
const certificates = new Map<string, Promise<string>>();

/** A certificate for `actor` from the stub's actor identity CA (as its admin API mints one), made once. */
function certificateOf(name: string, atespace = 'demo'): Promise<string> {
  const key = `${atespace}/${name}`;
  let pem = certificates.get(key);
  if (pem === undefined) certificates.set(key, (pem = mintActorCertificate(dir, { atespace, name }).then((m) => m.certPem)));
  return pem;
}

async function adminCall<T = any>(base: string, method: string, route: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`http://${base}${route}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
}
const stubAdmin = <T = any>(method: string, route: string, body?: unknown) => adminCall<T>(stub.addresses.admin!, method, route, body);

async function connect(name: string, authority: string, extra: { metadata?: Record<string, string>; signal?: AbortSignal } = {}): Promise<ExtProcVerdict> {
  return (await egressConnect(client, { authority, certificate: await certificateOf(name), ...extra })).verdict;
}

/** The outcome an answer stands for, checked against the contract's status, body and details. */
function outcomeOf(verdict: ExtProcVerdict): EgressOutcome | undefined {
  if (verdict.kind === 'continue') return verdict.metadata[EGRESS_METADATA_NAMESPACE]?.verdict === 'allow' ? 'allowed' : undefined;
  const outcome = egressOutcomeOf(verdict.details);
  if (outcome === undefined) return undefined;
  assert.equal(verdict.status, EGRESS_OUTCOMES[outcome].status, verdict.details);
  if (outcome !== 'not_running') assert.equal(verdict.body, EGRESS_OUTCOMES[outcome].body);
  return outcome;
}

const ALLOW_LOOPBACK_9000 = { rules: [{ kind: 'cidrs', cidrs: ['127.0.0.0/8'], ports: [9000] }, { kind: 'cidrs', cidrs: ['fd00::/8'], ports: 'all' }] };

async function running(name: string): Promise<{ status?: string }> {
  const r = await stubAdmin('POST', `/actors/demo/${name}/resume`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

async function rpcCounts(): Promise<Record<string, Record<string, number>>> {
  return (await stubAdmin('GET', '/stats')).body.rpc;
}

describe('egress-e2e', () => {
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-egress-'));
    await createActorCa(dir);
    fixtures = await actorCertFixtures();
    const net = await workerNet();
    stub = await startStubInProcess([
      '--actor-ca-dir', dir, '--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--workers', '10', '--worker-ip-base', net.ipBase,
      '--worker-port', String(net.port), '--actors', '10', '--atespace', 'demo', '--cold-resume-ms', '5', '--resolve-latency-ms', '0',
    ]);
    extproc = await startExtprocInProcess(['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--apiserver', stub.addresses.grpc!, '--worker-port', String(net.port)]);
    client = new EnvoyLikeClient(extproc.addresses.grpc!);
  });

  after(async () => {
    client?.close();
    await extproc?.stop();
    await stub?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    await fixtures?.close();
  });

  describe('extproc egress mode', () => {
    test('deny by default: a running actor without a policy, or with zero rules, reaches nothing', async () => {
      await running('actor-000');
      const none = await connect('actor-000', '127.0.0.1:9000');
      assert.equal(outcomeOf(none), 'denied');
      assert.equal((await stubAdmin('PUT', '/actors/demo/actor-000/egress-policy', { rules: [] })).status, 200);
      assert.equal(outcomeOf(await connect('actor-000', '127.0.0.1:9000')), 'denied');
    });

    test('allowed once a policy names the destination: CONTINUE with the actor, its id and the rule that matched', async () => {
      await running('actor-001');
      assert.equal(outcomeOf(await connect('actor-001', '127.0.0.1:9000')), 'denied');
      assert.equal((await stubAdmin('PUT', '/actors/demo/actor-001/egress-policy', ALLOW_LOOPBACK_9000)).status, 200);
      const allowed = await connect('actor-001', '127.0.0.1:9000');
      assert.equal(outcomeOf(allowed), 'allowed');
      const actor = (await stubAdmin('GET', '/actors/demo/actor-001')).body;
      // The actor id is the control plane's (GetActor's), which the admin view does not show.
      const control = controlClient(stub.addresses.grpc!);
      const got = await control.call<api.ActorResponse>('GetActor', { actor_ref: { atespace: 'demo', name: 'actor-001' } });
      control.close();
      assert.ok(got.ok);
      assert.equal(actor.status, 'RUNNING');
      if (allowed.kind !== 'continue') return;
      assert.deepEqual(allowed.metadata[EGRESS_METADATA_NAMESPACE], { verdict: 'allow', actor_id: got.value.actor.actor_id, atespace: 'demo', name: 'actor-001', rule: '0' });
      const v6 = await connect('actor-001', '[fd00::7]:22');
      assert.ok(v6.kind === 'continue');
      assert.equal(v6.metadata[EGRESS_METADATA_NAMESPACE]?.rule, '1');
    });

    test('a port or a CIDR outside the rules is denied', async () => {
      await running('actor-002');
      assert.equal((await stubAdmin('PUT', '/actors/demo/actor-002/egress-policy', ALLOW_LOOPBACK_9000)).status, 200);
      assert.equal(outcomeOf(await connect('actor-002', '127.0.0.1:9001')), 'denied');
      assert.equal(outcomeOf(await connect('actor-002', '10.0.0.1:9000')), 'denied');
      assert.equal(outcomeOf(await connect('actor-002', '[fe80::1]:9000')), 'denied');
      assert.equal(outcomeOf(await connect('actor-002', '127.0.0.1:9000')), 'allowed');
      assert.equal((await stubAdmin('DELETE', '/actors/demo/actor-002/egress-policy')).status, 200);
      assert.equal(outcomeOf(await connect('actor-002', '127.0.0.1:9000')), 'denied', 'the policy deleted: deny by default again');
    });

    test('a suspended actor is 403 naming its state; a deleted or unknown one is 403 unknown actor', async () => {
      await running('actor-003');
      assert.equal((await stubAdmin('PUT', '/actors/demo/actor-003/egress-policy', ALLOW_LOOPBACK_9000)).status, 200);
      assert.equal(outcomeOf(await connect('actor-003', '127.0.0.1:9000')), 'allowed');
      assert.equal((await stubAdmin('POST', '/actors/demo/actor-003/suspend')).status, 200);
      const suspended = await connect('actor-003', '127.0.0.1:9000');
      assert.equal(outcomeOf(suspended), 'not_running');
      assert.ok(suspended.kind === 'immediate' && suspended.body === 'actor is STATUS_SUSPENDED, not running', JSON.stringify(suspended));
      assert.equal((await stubAdmin('DELETE', '/actors/demo/actor-003')).status, 200);
      assert.equal(outcomeOf(await connect('actor-003', '127.0.0.1:9000')), 'unknown_actor');
      assert.equal(outcomeOf(await connect('no-such-actor', '127.0.0.1:9000')), 'unknown_actor');
    });

    test('an actor still resuming is admitted (its activation already holds the certificate)', async () => {
      assert.equal((await stubAdmin('PUT', '/actors/demo/actor-004/egress-policy', ALLOW_LOOPBACK_9000)).status, 200);
      await certificateOf('actor-004');
      assert.equal((await stubAdmin('PUT', '/config', { coldResumeMs: 3000 })).status, 200);
      const resume = stubAdmin('POST', '/actors/demo/actor-004/resume');
      try {
        await eventually(async () => ((await stubAdmin('GET', '/actors/demo/actor-004')).body.status === 'RESUMING' ? true : undefined), 5000, 'RESUMING');
        assert.equal(outcomeOf(await connect('actor-004', '127.0.0.1:9000')), 'allowed');
        assert.equal((await stubAdmin('GET', '/actors/demo/actor-004')).body.status, 'RESUMING', 'answered while the actor was still resuming');
      } finally {
        await stubAdmin('PUT', '/config', { coldResumeMs: 5 });
        await resume;
      }
    });

    test('an authority that is not IP:port is 403 egress denied, after the actor is checked', async () => {
      await running('actor-005');
      assert.equal((await stubAdmin('PUT', '/actors/demo/actor-005/egress-policy', { rules: [{ kind: 'all' }] })).status, 200);
      for (const authority of ['example.com:443', '127.0.0.1', '127.0.0.1:0', '[::1]', 'x'.repeat(70), '']) {
        const verdict = await connect('actor-005', authority);
        assert.equal(outcomeOf(verdict), 'not_ip_authority', authority);
      }
      assert.equal(outcomeOf(await connect('no-such-actor', 'example.com:443')), 'unknown_actor', 'the actor is checked first');
      assert.equal(outcomeOf(await connect('actor-005', '192.0.2.1:1')), 'allowed');
    });

    test('a missing or malformed certificate attribute, or a certificate an actor must not present, is 403 invalid_certificate, and costs no control-plane call', async () => {
      const before = await rpcCounts();
      const garbage = ['not a certificate', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', 'x'.repeat(20_000), ''];
      // Another CA's certificate is the data plane's to refuse (it verifies the chain); extproc sees an actor.
      const bad = (Object.keys(fixtures.bad) as BadActorCert[]).filter((n) => n !== 'other-ca').map((n) => fixtures.bad[n].certPem);
      for (const certificate of [undefined, ...garbage, ...bad]) {
        const { verdict } = await egressConnect(client, { authority: '127.0.0.1:9000', certificate });
        assert.equal(outcomeOf(verdict), 'invalid_certificate', String(certificate).slice(0, 40));
      }
      const after = await rpcCounts();
      assert.deepEqual(after.GetActor, before.GetActor);
      assert.deepEqual(after.GetActorEgressPolicy, before.GetActorEgressPolicy);
    });

    test('a certificate minted through the stub\'s admin API for a running actor is the one its CONNECTs present', async () => {
      await running('actor-005');
      assert.equal((await stubAdmin('PUT', '/actors/demo/actor-005/egress-policy', { rules: [{ kind: 'all' }] })).status, 200);
      const minted = await stubAdmin<{ bundle: string; notAfter: string }>('POST', '/actors/demo/actor-005/certificate');
      assert.equal(minted.status, 200);
      const { verdict } = await egressConnect(client, { authority: '192.0.2.9:443', certificate: firstCertificate(minted.body.bundle) });
      assert.equal(outcomeOf(verdict), 'allowed');
    });

    test('no cache: every CONNECT costs one GetActor and one GetActorEgressPolicy, counted in both components', async () => {
      await running('actor-006');
      assert.equal((await stubAdmin('PUT', '/actors/demo/actor-006/egress-policy', ALLOW_LOOPBACK_9000)).status, 200);
      await stubAdmin('POST', '/stats/reset');
      await adminCall(extproc.addresses.admin!, 'POST', '/stats/reset');
      const verdicts = await Promise.all(Array.from({ length: 20 }, (_, i) => connect('actor-006', i % 2 === 0 ? '127.0.0.1:9000' : '127.0.0.1:9001')));
      assert.deepEqual(verdicts.map(outcomeOf).sort(), [...Array(10).fill('allowed'), ...Array(10).fill('denied')]);
      const rpc = await rpcCounts();
      assert.deepEqual(rpc.GetActor, { OK: 20 });
      assert.deepEqual(rpc.GetActorEgressPolicy, { OK: 20 });
      const stats = (await adminCall(extproc.addresses.admin!, 'GET', '/stats')).body;
      assert.equal(stats.egress.requests.allowed, 10);
      assert.equal(stats.egress.requests.denied, 10);
      assert.deepEqual(stats.egress.controlCalls, { GetActor: { OK: 20 }, GetActorEgressPolicy: { OK: 20 } });
      assert.equal(stats.requests.ok, 0, 'no ingress request was counted');
      const metrics = await (await fetch(`http://${extproc.addresses.admin}/metrics`)).text();
      assert.match(metrics, /actor_edge_extproc_egress_requests_total\{outcome="allowed"\} [1-9]/);
      assert.match(metrics, /actor_edge_extproc_egress_control_calls_total\{rpc="GetActorEgressPolicy",code="OK"\} [1-9]/);
      assert.match(metrics, /actor_edge_extproc_egress_duration_seconds_count\{outcome="denied"\} [1-9]/);
    });

    test('the direction decides: without OUTBOUND a CONNECT-looking message takes the ingress path', async () => {
      const { verdict } = await egressConnect(client, { authority: '127.0.0.1:9000', certificate: await certificateOf('actor-006'), direction: 1 });
      assert.ok(verdict.kind === 'immediate' && egressOutcomeOf(verdict.details) === undefined, JSON.stringify(verdict));
      assert.equal(verdict.status, 404, 'not an actor host');
    });

    test('a caller that goes away while the control plane is slow: the call is cancelled and counted, nothing answered', async () => {
      await running('actor-007');
      await adminCall(extproc.addresses.admin!, 'POST', '/stats/reset');
      assert.equal((await stubAdmin('PUT', '/config', { readLatencyMs: 60_000 })).status, 200);
      try {
        const abort = new AbortController();
        const pending = connect('actor-007', '127.0.0.1:9000', { signal: abort.signal });
        await eventually(async () => ((await adminCall(extproc.addresses.admin!, 'GET', '/stats')).body.streams.active > 0 ? true : undefined), 5000, 'the stream');
        abort.abort();
        await assert.rejects(pending);
        const stats = await eventually(async () => {
          const s = (await adminCall(extproc.addresses.admin!, 'GET', '/stats')).body;
          return s.egress.requests.cancelled === 1 ? s : undefined;
        }, 5000, 'the cancelled CONNECT counted');
        assert.deepEqual(stats.egress.controlCalls, { GetActor: { CANCELLED: 1 } });
      } finally {
        await stubAdmin('PUT', '/config', { readLatencyMs: 0 });
      }
    });

    test('a control plane slower than the data plane\'s budget is 503 unavailable', async () => {
      await running('actor-008');
      assert.equal((await stubAdmin('PUT', '/config', { readLatencyMs: 60_000 })).status, 200);
      try {
        const verdict = await connect('actor-008', '127.0.0.1:9000', { metadata: { 'actor-edge-resume-budget-ms': '200' } });
        assert.equal(outcomeOf(verdict), 'unavailable');
      } finally {
        await stubAdmin('PUT', '/config', { readLatencyMs: 0 });
      }
    });

    test('control plane down: 503 unavailable (an outage, then the stub gone), and no error logged', async () => {
      await running('actor-009');
      assert.equal((await stubAdmin('PUT', '/actors/demo/actor-009/egress-policy', ALLOW_LOOPBACK_9000)).status, 200);
      assert.equal(outcomeOf(await connect('actor-009', '127.0.0.1:9000')), 'allowed');
      assert.equal((await stubAdmin('POST', '/outage', { ms: 600_000 })).status, 200);
      assert.equal(outcomeOf(await connect('actor-009', '127.0.0.1:9000')), 'unavailable');
      await stubAdmin('DELETE', '/outage');
      assert.equal(outcomeOf(await connect('actor-009', '127.0.0.1:9000')), 'allowed', 'nothing was remembered of the outage');
      await stub.stop();
      assert.equal(outcomeOf(await connect('actor-009', '127.0.0.1:9000', { metadata: { 'actor-edge-resume-budget-ms': '500' } })), 'unavailable');
      const errors = extproc.logs().filter((l) => (l.level as number) >= 50 || l.msg === 'ext_proc stream error');
      assert.deepEqual(errors, []);
    });
  });
});
