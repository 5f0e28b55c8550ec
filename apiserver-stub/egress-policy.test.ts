/**
 * Egress policies in the control-plane simulator: the admin routes that set, read and delete them, GetActorEgressPolicy
 * (NOT_FOUND without a policy or an actor; the outage and the read latency like every other read), policies going with
 * their actor, and the seed the stub starts with.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import type * as api from './ateapi-types.js';
import { parseEgressSeed } from './egress-seed.js';
import { seedActorNames } from './seed.js';
import { admin } from './testing/clients.js';
import { startTestStub, type TestStub } from './testing/stub-alone.js';

const ALLOW_9000 = { rules: [{ kind: 'cidrs', cidrs: ['127.0.0.1/32'], ports: [9000] }] };

interface PolicyView {
  atespace: string;
  name: string;
  generation: number;
  rules: unknown[];
}

describe('apiserver-stub egress policies', () => {
  let s: TestStub;
  before(async () => {
    s = await startTestStub({ workers: 1, actors: 6 });
  });
  after(async () => {
    await s.close();
  });

  const getPolicy = (name: string, atespace = 'demo') => s.client.call<api.GetActorEgressPolicyResponse>('GetActorEgressPolicy', { actor_ref: { atespace, name } });
  const path = (name: string) => `/actors/demo/${name}/egress-policy`;

  test('no policy, no actor: NOT_FOUND, each saying which; a bad reference: INVALID_ARGUMENT', async () => {
    const none = await getPolicy('actor-000');
    assert.ok(!none.ok && none.code === status.NOT_FOUND);
    assert.equal(none.details, 'actor "demo/actor-000" has no egress policy');
    const unknown = await getPolicy('nobody');
    assert.ok(!unknown.ok && unknown.code === status.NOT_FOUND);
    assert.equal(unknown.details, 'actor "demo/nobody" not found');
    const bad = await getPolicy('Bad_Name');
    assert.ok(!bad.ok && bad.code === status.INVALID_ARGUMENT);
    assert.equal((await admin(s.admin, 'GET', path('actor-000'))).status, 404);
  });

  test('PUT sets the policy; GET and GetActorEgressPolicy answer it; every change raises the generation', async () => {
    const put = await admin<PolicyView>(s.admin, 'PUT', path('actor-001'), ALLOW_9000);
    assert.equal(put.status, 200);
    assert.deepEqual(put.body.rules, [{ kind: 'cidrs', cidrs: ['127.0.0.1/32'], ports: [9000] }]);
    const got = await admin<PolicyView>(s.admin, 'GET', path('actor-001'));
    assert.deepEqual(got.body, put.body);

    const rpc = await getPolicy('actor-001');
    assert.ok(rpc.ok, rpc.ok ? '' : rpc.details);
    assert.deepEqual(rpc.value.policy, {
      atespace: 'demo',
      name: 'actor-001',
      rules: [{ kind: 'cidrs', cidrs: ['127.0.0.1/32'], ports: [9000], hostnames: [] }],
      generation: String(put.body.generation),
    });

    const all = await admin<PolicyView>(s.admin, 'PUT', path('actor-001'), { rules: [{ kind: 'all' }, { kind: 'cidrs', cidrs: ['10.0.0.0/8', 'fd00::/8'], ports: 'all' }] });
    assert.equal(all.status, 200);
    assert.ok(all.body.generation > put.body.generation);
    const rpc2 = await getPolicy('actor-001');
    assert.ok(rpc2.ok);
    assert.deepEqual(
      rpc2.value.policy?.rules.map((r) => [r.kind, r.cidrs, r.ports]),
      [['all', [], []], ['cidrs', ['10.0.0.0/8', 'fd00::/8'], []]],
      'every port is an empty list',
    );
    const named = await admin<PolicyView>(s.admin, 'PUT', path('actor-001'), { rules: [{ kind: 'hostnames', hostnames: ['API.example.com', '*.example.com'], ports: [443] }] });
    assert.equal(named.status, 200);
    assert.deepEqual(named.body.rules, [{ kind: 'hostnames', hostnames: ['api.example.com', '*.example.com'], ports: [443] }], 'patterns are kept lowered');
    const rpc3 = await getPolicy('actor-001');
    assert.ok(rpc3.ok);
    assert.deepEqual(rpc3.value.policy?.rules, [{ kind: 'hostnames', cidrs: [], ports: [443], hostnames: ['api.example.com', '*.example.com'] }]);
    const empty = await admin<PolicyView>(s.admin, 'PUT', path('actor-001'), { rules: [] });
    assert.equal(empty.status, 200, 'zero rules is a policy (that reaches nothing)');
    assert.ok(empty.body.generation > all.body.generation);
  });

  test('a bad policy is 400 naming the field, and changes nothing; an unknown actor is 404', async () => {
    assert.equal((await admin(s.admin, 'PUT', path('actor-002'), ALLOW_9000)).status, 200);
    const cases: [unknown, string][] = [
      [{ rules: [{ kind: 'cidrs', cidrs: ['127.0.0.1/32'], ports: [9000, 70000] }] }, 'rules[0].ports[1]'],
      [{ rules: [{ kind: 'all' }, { kind: 'cidrs', cidrs: ['10.0.0.0/33'] }] }, 'rules[1].cidrs[0]'],
      [{ rules: [{ kind: 'tls', hostnames: ['*.example.com'] }] }, 'rules[0].kind'],
      [{ rules: [{ kind: 'hostnames', hostnames: ['*.*.example.com'] }] }, 'rules[0].hostnames[0]'],
      [{ rules: [{ kind: 'cidrs', cidrs: [] }] }, 'rules[0].cidrs'],
      [{ rule: [] }, 'expected {"rules": [...]}'],
      [[], 'expected {"rules": [...]}'],
    ];
    for (const [body, field] of cases) {
      const r = await admin<{ error: string; code: string }>(s.admin, 'PUT', path('actor-002'), body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.code, 'INVALID_ARGUMENT');
      assert.ok(r.body.error.startsWith(`egress policy: ${field}`), r.body.error);
    }
    const kept = await admin<PolicyView>(s.admin, 'GET', path('actor-002'));
    assert.deepEqual(kept.body.rules, ALLOW_9000.rules);
    assert.equal((await admin(s.admin, 'PUT', '/actors/demo/nobody/egress-policy', ALLOW_9000)).status, 404);
    assert.equal((await admin(s.admin, 'PUT', '/actors/demo/Bad_Name/egress-policy', ALLOW_9000)).status, 400);
  });

  test('DELETE removes the policy (NOT_FOUND again); a second DELETE is 404', async () => {
    assert.equal((await admin(s.admin, 'PUT', path('actor-003'), ALLOW_9000)).status, 200);
    assert.ok((await getPolicy('actor-003')).ok);
    assert.equal((await admin(s.admin, 'DELETE', path('actor-003'))).status, 200);
    const gone = await getPolicy('actor-003');
    assert.ok(!gone.ok && gone.code === status.NOT_FOUND);
    assert.equal((await admin(s.admin, 'GET', path('actor-003'))).status, 404);
    assert.equal((await admin(s.admin, 'DELETE', path('actor-003'))).status, 404);
  });

  test('the policy goes with its actor: recreated under the same name, it has none; a new one has a higher generation', async () => {
    const first = await admin<PolicyView>(s.admin, 'PUT', '/actors/other/fresh/egress-policy', ALLOW_9000);
    assert.equal(first.status, 404, 'no actor yet');
    assert.equal((await admin(s.admin, 'POST', '/actors/other/fresh')).status, 201);
    const set = await admin<PolicyView>(s.admin, 'PUT', '/actors/other/fresh/egress-policy', ALLOW_9000);
    assert.equal(set.status, 200);
    assert.equal((await admin(s.admin, 'DELETE', '/actors/other/fresh')).status, 200);
    const deleted = await getPolicy('fresh', 'other');
    assert.ok(!deleted.ok && deleted.details === 'actor "other/fresh" not found');
    assert.equal((await admin(s.admin, 'POST', '/actors/other/fresh')).status, 201);
    const recreated = await getPolicy('fresh', 'other');
    assert.ok(!recreated.ok && recreated.details === 'actor "other/fresh" has no egress policy');
    const again = await admin<PolicyView>(s.admin, 'PUT', '/actors/other/fresh/egress-policy', ALLOW_9000);
    assert.ok(again.body.generation > set.body.generation);
  });

  test('an outage answers UNAVAILABLE; calls are counted by code in /stats and /metrics; /stats counts the policies', async () => {
    await admin(s.admin, 'POST', '/stats/reset');
    assert.equal((await admin(s.admin, 'PUT', path('actor-004'), ALLOW_9000)).status, 200);
    assert.ok((await getPolicy('actor-004')).ok);
    assert.equal((await admin(s.admin, 'POST', '/outage', { ms: 600_000 })).status, 200);
    try {
      const r = await getPolicy('actor-004');
      assert.ok(!r.ok && r.code === status.UNAVAILABLE);
    } finally {
      await admin(s.admin, 'DELETE', '/outage');
    }
    await getPolicy('actor-005');
    const stats = await admin<{ rpc: Record<string, Record<string, number>>; egressPolicies: number }>(s.admin, 'GET', '/stats');
    assert.deepEqual(stats.body.rpc.GetActorEgressPolicy, { OK: 1, UNAVAILABLE: 1, NOT_FOUND: 1 });
    const withPolicy = (await Promise.all(seedActorNames(6).map((n) => admin(s.admin, 'GET', path(n))))).filter((r) => r.status === 200).length;
    assert.equal(stats.body.egressPolicies, withPolicy + 1, 'the seeded ones and other/fresh');
    const metrics = await (await fetch(`http://${s.admin}/metrics`)).text();
    assert.match(metrics, /actor_edge_apiserver_stub_rpc_total\{method="GetActorEgressPolicy",code="UNAVAILABLE"\} [1-9]/);
    assert.match(metrics, new RegExp(`actor_edge_apiserver_stub_egress_policies ${withPolicy + 1}\\b`));
  });

  test('readLatencyMs delays the reads: a policy deleted while the call waits is not answered', async () => {
    assert.equal((await admin(s.admin, 'PUT', path('actor-005'), ALLOW_9000)).status, 200);
    assert.equal((await admin(s.admin, 'PUT', '/config', { readLatencyMs: 1000 })).status, 200);
    try {
      const pending = getPolicy('actor-005');
      const actorRead = s.client.call<api.ActorResponse>('GetActor', { actor_ref: { atespace: 'demo', name: 'actor-005' } });
      assert.equal((await admin(s.admin, 'DELETE', path('actor-005'))).status, 200);
      assert.equal((await admin(s.admin, 'DELETE', '/actors/demo/actor-005')).status, 200);
      const r = await pending;
      assert.ok(!r.ok && r.code === status.NOT_FOUND, 'read after the delay');
      const a = await actorRead;
      assert.ok(!a.ok && a.code === status.NOT_FOUND, 'GetActor too');
    } finally {
      await admin(s.admin, 'PUT', '/config', { readLatencyMs: 0 });
    }
    assert.equal((await admin(s.admin, 'PUT', '/config', { readLatencyMs: -1 })).status, 400);
  });
});

describe('apiserver-stub seeded egress policies', () => {
  let s: TestStub;
  before(async () => {
    const seed = parseEgressSeed(JSON.stringify({ 'actor-000': ALLOW_9000, '*': { rules: [{ kind: 'all', ports: [53] }] } }), () => seedActorNames(3));
    s = await startTestStub({ workers: 1, actors: 3, egressSeed: seed });
  });
  after(async () => {
    await s.close();
  });

  test('each seeded actor starts with its own policy, or the "*" one', async () => {
    const policy = async (name: string) => (await admin<PolicyView>(s.admin, 'GET', `/actors/demo/${name}/egress-policy`)).body.rules;
    assert.deepEqual(await policy('actor-000'), ALLOW_9000.rules);
    assert.deepEqual(await policy('actor-001'), [{ kind: 'all', ports: [53] }]);
    assert.deepEqual(await policy('actor-002'), [{ kind: 'all', ports: [53] }]);
    const created = await admin(s.admin, 'POST', '/actors/demo/later');
    assert.equal(created.status, 201);
    assert.equal((await admin(s.admin, 'GET', '/actors/demo/later/egress-policy')).status, 404, 'actors created later have none');
  });
});
