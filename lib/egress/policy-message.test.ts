import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decideEgress, parseEgressPolicy } from './policy.js';
import { egressPolicyMessage, policyOfMessage, type EgressPolicyMessage } from './policy-message.js';

test('a stored policy survives the message both ways: same rules, same verdicts, its generation', () => {
  const policy = parseEgressPolicy({ rules: [{ kind: 'cidrs', cidrs: ['10.0.0.0/8'], ports: [443] }, { kind: 'all', ports: 'all' }] });
  const message = egressPolicyMessage('demo', 'a', policy, 7);
  assert.deepEqual(message, {
    atespace: 'demo',
    name: 'a',
    rules: [
      { kind: 'cidrs', cidrs: ['10.0.0.0/8'], ports: [443], hostnames: [] },
      { kind: 'all', cidrs: [], ports: [], hostnames: [] },
    ],
    generation: '7',
  });
  const back = policyOfMessage(message);
  assert.ok(back.kind === 'policy');
  assert.deepEqual(back.policy.rules, policy.rules);
  assert.equal(back.generation, 7);
  assert.deepEqual(back.messageIndex, [0, 1]);
});

test('hostname rules survive the message both ways; the rule index names the message rule', () => {
  const message: EgressPolicyMessage = {
    atespace: 'demo',
    name: 'a',
    rules: [
      { kind: 'hostnames', cidrs: [], ports: [443], hostnames: ['*.Example.com'] },
      { kind: 'cidrs', cidrs: ['127.0.0.1/32'], ports: [9000], hostnames: [] },
    ],
    generation: '1',
  };
  const r = policyOfMessage(message);
  assert.ok(r.kind === 'policy');
  assert.deepEqual(r.policy.rules[0], { kind: 'hostnames', hostnames: ['*.example.com'], ports: [443] });
  assert.deepEqual(r.messageIndex, [0, 1]);
  assert.deepEqual(decideEgress(r.policy, { ip: '127.0.0.1', port: 9000 }), { kind: 'allow', rule: 1 });
  assert.deepEqual(decideEgress(r.policy, { ip: '1.2.3.4', port: 443 }), { kind: 'hostnames', rules: [{ rule: 0, hostnames: ['*.example.com'] }] });
  assert.deepEqual(egressPolicyMessage('demo', 'a', r.policy, 1).rules[0], { kind: 'hostnames', cidrs: [], ports: [443], hostnames: ['*.example.com'] });
  const bad = policyOfMessage({ ...message, rules: [{ kind: 'hostnames', cidrs: [], ports: [], hostnames: ['a..b'] }] });
  assert.equal(bad.kind, 'invalid');
});

test('a message the model cannot take is invalid, with the reason', () => {
  assert.deepEqual(policyOfMessage(null), { kind: 'invalid', error: 'the response carries no policy' });
  const bad = policyOfMessage({ atespace: 'd', name: 'a', generation: '1', rules: [{ kind: 'cidrs', cidrs: ['nope'], ports: [], hostnames: [] }] });
  assert.equal(bad.kind, 'invalid');
  const unknownKind = policyOfMessage({ atespace: 'd', name: 'a', generation: '1', rules: [{ kind: 'tls', cidrs: [], ports: [], hostnames: [] }] });
  assert.equal(unknownKind.kind, 'invalid');
});

test('generated messages: a policy or invalid, never a throw', () => {
  const rule = fc.record({
    kind: fc.constantFrom('cidrs', 'all', 'hostnames', '', 'x'),
    cidrs: fc.array(fc.oneof(fc.constantFrom('10.0.0.0/8', '::/0', '1.2.3.4'), fc.string()), { maxLength: 3 }),
    ports: fc.array(fc.integer({ min: -1, max: 70000 }), { maxLength: 3 }),
    hostnames: fc.array(fc.string(), { maxLength: 2 }),
  });
  fc.assert(
    fc.property(fc.array(rule, { maxLength: 5 }), fc.oneof(fc.string(), fc.bigInt().map(String)), (rules, generation) => {
      const r = policyOfMessage({ atespace: 'd', name: 'a', rules, generation });
      if (r.kind === 'policy') assert.equal(r.messageIndex.length, r.policy.rules.length);
    }),
    { seed: 4242, numRuns: 500 },
  );
});
