/**
 * The egress slow path against a scripted ext_proc server: the one message it sends, how each answer maps to a
 * verdict (and whether it may be cached), and that a stream without an answer — an error, the processor ending
 * it, the deadline, the actor gone — is 503 (or 408) and never cacheable, the stream cancelled. The answer mapping
 * also on generated answers.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { EGRESS_METADATA_NAMESPACE, EGRESS_OUTCOMES, type EgressOutcome } from '../../lib/egress/wire.js';
import { waitFor } from '../../lib/testing/wait.js';
import { Counters } from '../ops/stats.js';
import { GrpcExtProcClient } from '../stages/ext-proc/grpc-client.js';
import type { ProcessingResponse } from '../stages/ext-proc/messages.js';
import { silentLog, startScriptedExtProc, type ScriptedExtProc } from '../testing/helpers.js';
import { askExtProcEgress, egressAnswerOf, egressRequestMessage } from './extproc-egress.js';
import { allowAnswer, hostnamesAnswer, outcomeAnswer } from '../testing/egress/egress-rig.js';

let ep: ScriptedExtProc;
let client: GrpcExtProcClient;
const question = { destination: '10.0.0.7:443', certificatePem: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' };

describe('extproc-egress', () => {
  before(async () => {
    ep = await startScriptedExtProc(() => allowAnswer());
    client = new GrpcExtProcClient({ address: ep.address, messageTimeoutMs: 10_000, counters: new Counters(), log: silentLog });
  });
  after(async () => {
    client.close();
    await ep.close();
  });

  test('one request_headers message: CONNECT, the destination as :authority and host, end_of_stream, the certificate and the outbound direction', async () => {
    ep.script = () => allowAnswer(3, { actorId: 'uid-9', atespace: 'team', name: 'b' });
    ep.seen.length = 0;
    const answer = await askExtProcEgress(client, question, { timeoutMs: 2000 });
    assert.deepEqual(answer, { verdict: { kind: 'allow', actorId: 'uid-9', atespace: 'team', name: 'b', rule: 3 }, cacheable: true, outcome: 'allowed' });
    assert.equal(ep.seen.length, 1);
    const seen = ep.seen[0]!;
    assert.equal(seen.kind, 'request_headers');
    assert.deepEqual(seen.headers, { ':method': 'CONNECT', ':authority': '10.0.0.7:443', host: '10.0.0.7:443' });
    assert.equal(seen.endOfStream, true);
    const fields = (seen.raw.attributes as Record<string, { fields: Record<string, unknown> }>)['envoy.filters.http.ext_proc']!.fields;
    assert.deepEqual(fields, {
      'source.certificate': { kind: 'stringValue', stringValue: question.certificatePem },
      'xds.listener_direction': { kind: 'numberValue', numberValue: 2 },
    });
    assert.deepEqual(Object.keys(egressRequestMessage(question)).sort(), ['attributes', 'request_headers']);
  });

  test('each immediate response outcome: its status, its body, and only a policy denial cacheable', async () => {
    for (const outcome of Object.keys(EGRESS_OUTCOMES).filter((o) => o !== 'allowed') as Exclude<EgressOutcome, 'allowed'>[]) {
      ep.script = () => outcomeAnswer(outcome);
      const answer = await askExtProcEgress(client, question, { timeoutMs: 2000 });
      const spec = EGRESS_OUTCOMES[outcome];
      assert.deepEqual(answer, { verdict: { kind: 'deny', status: spec.status, body: spec.body, outcome }, cacheable: outcome === 'denied', outcome }, outcome);
    }
    ep.script = () => outcomeAnswer('not_running', 'actor is STATUS_SUSPENDED, not running');
    const suspended = await askExtProcEgress(client, question, { timeoutMs: 2000 });
    assert.deepEqual(suspended.verdict, { kind: 'deny', status: 403, body: 'actor is STATUS_SUSPENDED, not running', outcome: 'not_running' });
    ep.script = () => ({ immediate_response: { status: { code: 403 }, body: Buffer.from([0x00, 0x1b, 0x5b]), details: EGRESS_OUTCOMES.denied.details } });
    assert.deepEqual((await askExtProcEgress(client, question, { timeoutMs: 2000 })).verdict, { kind: 'deny', status: 403, body: 'egress denied', outcome: 'denied' }, 'a body that is not printable is not relayed');
  });

  test('a CONNECT to be decided on the traffic: the rules, checked, cacheable; rules that are not valid are 503', async () => {
    ep.script = () => hostnamesAnswer([{ rule: 2, hostnames: ['API.example.com', '*.svc.test'] }], { actorId: 'uid-9', atespace: 'team', name: 'b' });
    assert.deepEqual(await askExtProcEgress(client, question, { timeoutMs: 2000 }), {
      verdict: { kind: 'hostnames', actorId: 'uid-9', atespace: 'team', name: 'b', rules: [{ rule: 2, hostnames: ['api.example.com', '*.svc.test'] }] },
      cacheable: true,
      outcome: 'allowed',
    });
    for (const text of ['[]', 'not json', '[{"rule":0,"hostnames":["a..b"]}]']) {
      ep.script = () => hostnamesAnswer(text);
      const got = await askExtProcEgress(client, question, { timeoutMs: 2000 });
      assert.deepEqual([got.outcome, got.cacheable], ['unavailable', false], text);
      assert.match(got.detail ?? '', /^actor_edge\.egress hostnames/);
    }
  });

  test('answers that decide nothing are 503 control plane unavailable, never cacheable', async () => {
    const ns = EGRESS_METADATA_NAMESPACE;
    const odd: ProcessingResponse[] = [
      { request_headers: { response: { status: 'CONTINUE' } } },
      { request_headers: { response: { status: 'CONTINUE_AND_REPLACE' } }, dynamic_metadata: allowAnswer().dynamic_metadata ?? null },
      { ...allowAnswer(), dynamic_metadata: { fields: { [ns]: { kind: 'structValue', structValue: { fields: { verdict: { kind: 'stringValue', stringValue: 'deny' } } } } } } },
      { ...allowAnswer(), dynamic_metadata: { fields: { [ns]: { kind: 'structValue', structValue: { fields: { verdict: { kind: 'stringValue', stringValue: 'allow' } } } } } } },
      allowAnswer(-1),
      { immediate_response: { status: { code: 200 }, details: EGRESS_OUTCOMES.allowed.details } },
      { immediate_response: { status: { code: 403 }, details: 'not_an_egress_outcome' } },
      { response_headers: { response: {} } },
    ];
    for (const answer of odd) {
      ep.script = () => answer;
      const got = await askExtProcEgress(client, question, { timeoutMs: 2000 });
      assert.deepEqual([got.verdict, got.cacheable], [{ kind: 'deny', status: 503, body: 'control plane unavailable', outcome: 'unavailable' }, false], JSON.stringify(answer));
      assert.equal(typeof got.detail, 'string');
    }
  });

  test('a stream error, the processor ending the stream, or no answer within the deadline: 503; the unanswered stream is cancelled', async () => {
    for (const script of ['fail', 'end-ok'] as const) {
      ep.script = () => script;
      const got = await askExtProcEgress(client, question, { timeoutMs: 2000 });
      assert.deepEqual([got.outcome, got.cacheable], ['unavailable', false], script);
    }
    ep.script = () => 'ignore';
    const closedBefore = ep.closedByClient;
    const slow = await askExtProcEgress(client, question, { timeoutMs: 50 });
    assert.deepEqual([slow.outcome, slow.verdict.kind === 'deny' && slow.verdict.status], ['unavailable', 503]);
    await waitFor(() => ep.closedByClient > closedBefore, 5000, 'the stream to be cancelled');
  });

  test('the actor going away cancels the stream: 408, never cacheable', async () => {
    ep.script = () => 'ignore';
    const closedBefore = ep.closedByClient;
    const seenBefore = ep.seen.length;
    const gone = new AbortController();
    const asking = askExtProcEgress(client, question, { timeoutMs: 5000, signal: gone.signal });
    await waitFor(() => ep.seen.length > seenBefore, 5000, 'the message at the processor');
    gone.abort();
    const got = await asking;
    assert.deepEqual([got.outcome, got.cacheable, got.verdict], ['cancelled', false, { kind: 'deny', status: 408, body: 'request cancelled', outcome: 'cancelled' }]);
    await waitFor(() => ep.closedByClient > closedBefore, 5000, 'the stream to be cancelled');
    const already = await askExtProcEgress(client, question, { timeoutMs: 5000, signal: gone.signal });
    assert.equal(already.outcome, 'cancelled', 'an actor already gone opens no stream');
  });

  test('generated answers: the mapping never throws; allow only with well-formed metadata; a denial only with an outcome\'s status', () => {
    const statuses = new Set(Object.values(EGRESS_OUTCOMES).map((s) => s.status));
    const value = fc.oneof(
      fc.record({ kind: fc.constant('stringValue'), stringValue: fc.oneof(fc.constant('allow'), fc.string()) }),
      fc.record({ kind: fc.constant('numberValue'), numberValue: fc.oneof(fc.integer({ min: -2, max: 5 }), fc.double()) }),
      fc.record({ kind: fc.constant('boolValue'), boolValue: fc.boolean() }),
    );
    const metadata = fc.option(
      fc.record({
        fields: fc.dictionary(fc.oneof(fc.constant(EGRESS_METADATA_NAMESPACE), fc.string()), fc.record({ kind: fc.constant('structValue'), structValue: fc.record({ fields: fc.dictionary(fc.constantFrom('verdict', 'actor_id', 'atespace', 'name', 'rule', 'x'), value) }) })),
      }),
      { nil: undefined },
    );
    const details = fc.oneof(fc.constantFrom(...Object.values(EGRESS_OUTCOMES).map((s) => s.details)), fc.string());
    const answer: fc.Arbitrary<ProcessingResponse> = fc.oneof(
      fc.record({ request_headers: fc.record({ response: fc.record({ status: fc.constantFrom('CONTINUE', 'CONTINUE_AND_REPLACE', undefined as unknown as string) }) }), dynamic_metadata: metadata }, { requiredKeys: ['request_headers'] }),
      fc.record({ immediate_response: fc.record({ status: fc.record({ code: fc.integer({ min: 0, max: 999 }) }), body: fc.uint8Array({ maxLength: 300 }), details }, { requiredKeys: [] }) }),
      fc.record({ response_headers: fc.record({ response: fc.constant({}) }) }),
      fc.constant({}),
    );
    // A well-formed allow, with one of its fields dropped or not, and its status CONTINUE (or unset) or not.
    const nearAllow = fc
      .record({
        actorId: fc.string(),
        atespace: fc.string(),
        name: fc.string(),
        rule: fc.nat(),
        drop: fc.constantFrom('none', 'verdict', 'actor_id', 'atespace', 'name', 'rule'),
        status: fc.constantFrom('CONTINUE', undefined, 'CONTINUE_AND_REPLACE'),
      })
      .map(({ drop, status, ...a }) => {
        const m = allowAnswer(a.rule, a) as { request_headers: { response: { status?: string } }; dynamic_metadata: { fields: Record<string, { structValue: { fields: Record<string, unknown> } }> } };
        if (drop !== 'none') delete m.dynamic_metadata.fields[EGRESS_METADATA_NAMESPACE]!.structValue.fields[drop];
        if (status === undefined) delete m.request_headers.response.status;
        else m.request_headers.response.status = status;
        return { m: m as ProcessingResponse, allows: drop === 'none' && status !== 'CONTINUE_AND_REPLACE' };
      });
    fc.assert(
      fc.property(nearAllow, ({ m, allows }) => {
        assert.equal(egressAnswerOf({ kind: 'response', response: m }).verdict.kind, allows ? 'allow' : 'deny');
      }),
      { seed: 4344, numRuns: 300 },
    );
    fc.assert(
      fc.property(answer, (m) => {
        const got = egressAnswerOf({ kind: 'response', response: m });
        if (got.verdict.kind === 'allow') {
          const fields = m.dynamic_metadata?.fields?.[EGRESS_METADATA_NAMESPACE]?.structValue?.fields;
          assert.equal(fields?.verdict?.stringValue, 'allow');
          assert.ok(Number.isInteger(got.verdict.rule) && got.verdict.rule >= 0);
          assert.equal(got.outcome, 'allowed');
        } else {
          assert.ok(got.verdict.kind === 'deny', 'no hostnames field, no hostnames verdict');
          assert.ok(statuses.has(got.verdict.status), `status ${got.verdict.status}`);
          assert.equal(got.cacheable, got.outcome === 'denied');
          assert.ok(got.verdict.body.length > 0 && got.verdict.body.length <= 256);
        }
      }),
      { seed: 4343, numRuns: 500 },
    );
  });
});
