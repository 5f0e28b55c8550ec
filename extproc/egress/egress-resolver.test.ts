/**
 * The egress resolver against a control plane that answers what the test scripts (in the process, no network): the
 * answers a real control plane may give that the simulator never does (a policy the model cannot take, an actor
 * missing from an OK answer, unexpected codes, other states), and hostname rules, each with its outcome.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { collectingLogger } from '../../lib/collecting-logger.js';
import { EGRESS_METADATA_NAMESPACE, egressOutcomeOf, OUTBOUND_DIRECTION } from '../../lib/egress/wire.js';
import type { EgressPolicyMessage } from '../../lib/egress/policy-message.js';
import type { ControlActor, ControlClient } from '../../lib/resume/control-client.js';
import { ParkingLot } from '../../lib/resume/parking-lot.js';
import { ThrottledWarnings } from '../../lib/throttled-warnings.js';
import { DevCa } from '../../lib/tls/dev-ca.js';
import { ExtprocMetrics } from '../metrics.js';
import { externalProcessorService, type ProcessingResponse } from '../protocol.js';
import { firstCertificate } from '../testing/egress-connect.js';
import { verdictOf, type ExtProcVerdict } from '../testing/envoy-like-client.js';
import { ControlReads } from './control-reads.js';
import { EgressResolver } from './egress-resolver.js';

type Answer<T> = { ok: T } | { code: grpc.status };

let dir: string;
let certificate: string;
let actorAnswer: Answer<{ actor: ControlActor | null }>;
let policyAnswer: Answer<{ policy: EgressPolicyMessage | null }>;

const RUNNING: ControlActor = { actor_id: 'id-1', version: '3', status: 'STATUS_RUNNING', ateom_pod_ip: '10.0.0.1', atespace: 'demo' };

function unary<T>(answer: () => Answer<T>) {
  return (_req: unknown, _md: grpc.Metadata, _opts: unknown, cb: (err: grpc.ServiceError | null, res?: T) => void) => {
    const a = answer();
    queueMicrotask(() => ('ok' in a ? cb(null, a.ok) : cb(Object.assign(new Error('scripted'), { code: a.code, details: 'scripted', metadata: new grpc.Metadata() }))));
    return { cancel: () => undefined } as unknown as grpc.ClientUnaryCall;
  };
}

const client = { GetActor: unary(() => actorAnswer), GetActorEgressPolicy: unary(() => policyAnswer) } as unknown as ControlClient;
const { log, lines } = collectingLogger('extproc');
const metrics = new ExtprocMetrics(() => new ParkingLot(1));
const resolver = new EgressResolver({
  reads: new ControlReads(client, { call: (rpc, code) => metrics.egressControlCall(rpc, code) }),
  metrics,
  log,
  warnings: new ThrottledWarnings(log, 60_000),
  timeoutMs: 1000,
});

const decode = (r: ProcessingResponse): ExtProcVerdict =>
  verdictOf(externalProcessorService().service.Process!.responseDeserialize(Buffer.isBuffer(r) ? r : externalProcessorService().service.Process!.responseSerialize(r)));

async function connect(authority = '127.0.0.1:9000'): Promise<ExtProcVerdict> {
  return decode(await resolver.connect(authority, { direction: OUTBOUND_DIRECTION, certificate }, new AbortController().signal));
}

const outcome = (v: ExtProcVerdict): string => (v.kind === 'continue' ? 'allowed' : (egressOutcomeOf(v.details) ?? v.details));

function policy(rules: EgressPolicyMessage['rules']): Answer<{ policy: EgressPolicyMessage | null }> {
  return { ok: { policy: { atespace: 'demo', name: 'actor-000', rules, generation: '4' } } };
}

describe('egress-resolver', () => {
  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-egress-resolver-'));
    const ca = await DevCa.create(dir, { name: 'actor-ca' });
    const bundle = await ca.issue({ name: 'a', commonName: 'a', uris: ['spiffe://substrate-actor.local/atespace/demo/actor/actor-000'], usage: 'client' });
    certificate = firstCertificate(await readFile(bundle, 'utf8'));
  });

  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('hostname rules: off their port they do not count; the rule is named as the control plane numbered it; a destination only they may allow is answered with them', async () => {
    actorAnswer = { ok: { actor: RUNNING } };
    policyAnswer = policy([
      { kind: 'hostnames', cidrs: [], ports: [443], hostnames: ['*.example.com'] },
      { kind: 'cidrs', cidrs: ['127.0.0.1/32'], ports: [], hostnames: [] },
    ]);
    const v = await connect();
    assert.ok(v.kind === 'continue');
    assert.deepEqual(v.metadata[EGRESS_METADATA_NAMESPACE], { verdict: 'allow', actor_id: 'id-1', atespace: 'demo', name: 'actor-000', rule: '1' });
    policyAnswer = policy([
      { kind: 'cidrs', cidrs: ['10.0.0.0/8'], ports: [], hostnames: [] },
      { kind: 'hostnames', cidrs: [], ports: [443], hostnames: ['*.Example.com', 'api.test'] },
      { kind: 'hostnames', cidrs: [], ports: [], hostnames: ['*'] },
    ]);
    assert.equal(outcome(await connect('127.0.0.1:9000')), 'allowed');
    const h = await connect('127.0.0.1:443');
    assert.ok(h.kind === 'continue');
    assert.deepEqual(h.metadata[EGRESS_METADATA_NAMESPACE], {
      verdict: 'hostnames',
      actor_id: 'id-1',
      atespace: 'demo',
      name: 'actor-000',
      hostnames: '[{"rule":1,"hostnames":["*.example.com","api.test"]},{"rule":2,"hostnames":["*"]}]',
    });
    policyAnswer = policy([{ kind: 'hostnames', cidrs: [], ports: [443], hostnames: ['*'] }]);
    assert.equal(outcome(await connect('127.0.0.1:9000')), 'denied', 'a hostname rule on another port reaches nothing');
  });

  test('a policy the model cannot take is 503 (not a denial to cache), with one warning', async () => {
    actorAnswer = { ok: { actor: RUNNING } };
    policyAnswer = policy([{ kind: 'cidrs', cidrs: ['not-a-cidr'], ports: [], hostnames: [] }]);
    assert.equal(outcome(await connect()), 'unavailable');
    policyAnswer = { ok: { policy: null } };
    assert.equal(outcome(await connect()), 'unavailable');
    const warnings = lines.filter((l) => String(l.msg).startsWith('the control plane answered an egress policy'));
    assert.equal(warnings.length, 1, 'throttled');
    assert.match(String(warnings[0]?.error), /not-a-cidr/);
    policyAnswer = policy([{ kind: 'hostnames', cidrs: [], ports: [443], hostnames: ['bad..name'] }]);
    assert.equal(outcome(await connect('127.0.0.1:443')), 'unavailable', 'a hostname pattern the model cannot take');
  });

  test('GetActor answers: other states are not_running; no actor, or an unexpected code, is 503', async () => {
    policyAnswer = policy([{ kind: 'all', cidrs: [], ports: [], hostnames: [] }]);
    for (const status of ['STATUS_SUSPENDING', 'STATUS_PAUSED', 'STATUS_UNSPECIFIED']) {
      actorAnswer = { ok: { actor: { ...RUNNING, status } } };
      const v = await connect();
      assert.equal(outcome(v), 'not_running');
      assert.ok(v.kind === 'immediate' && v.body === `actor is ${status}, not running`);
    }
    actorAnswer = { ok: { actor: null } };
    assert.equal(outcome(await connect()), 'unavailable');
    for (const code of [grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED, grpc.status.INTERNAL, grpc.status.PERMISSION_DENIED, grpc.status.UNIMPLEMENTED]) {
      actorAnswer = { code };
      assert.equal(outcome(await connect()), 'unavailable', grpc.status[code]);
    }
    actorAnswer = { code: grpc.status.NOT_FOUND };
    assert.equal(outcome(await connect()), 'unknown_actor');
  });

  test('GetActorEgressPolicy answers: NOT_FOUND is no policy (denied); any other error is 503', async () => {
    actorAnswer = { ok: { actor: RUNNING } };
    policyAnswer = { code: grpc.status.NOT_FOUND };
    assert.equal(outcome(await connect()), 'denied');
    for (const code of [grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED, grpc.status.INTERNAL, grpc.status.UNIMPLEMENTED]) {
      policyAnswer = { code };
      assert.equal(outcome(await connect()), 'unavailable', grpc.status[code]);
    }
  });

  test('a caller already gone: cancelled, without a control-plane call', async () => {
    const before = metrics.stats().egress;
    const abort = new AbortController();
    abort.abort();
    await resolver.connect('127.0.0.1:9000', { direction: OUTBOUND_DIRECTION, certificate }, abort.signal);
    const after = metrics.stats().egress;
    assert.equal(after.requests.cancelled, (before.requests.cancelled ?? 0) + 1);
    assert.deepEqual(after.controlCalls, before.controlCalls);
  });
});
