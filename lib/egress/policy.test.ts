import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decideEgress, EgressPolicyError, parseEgressPolicy, parseIpAuthority, type EgressVerdict } from './policy.js';

const policy = parseEgressPolicy({
  rules: [
    { kind: 'cidrs', cidrs: ['10.0.0.0/8', '192.168.1.7'], ports: [443, 8443] },
    { kind: 'cidrs', cidrs: ['fd00::/8'], ports: 'all' },
    { kind: 'all', ports: [53] },
  ],
});

test('decideEgress: the first matching rule allows; everything else is denied, by default', () => {
  const table: [string, EgressVerdict][] = [
    ['10.1.2.3:443', { kind: 'allow', rule: 0 }],
    ['10.255.255.255:8443', { kind: 'allow', rule: 0 }],
    ['192.168.1.7:443', { kind: 'allow', rule: 0 }],
    ['[fd12::1]:22', { kind: 'allow', rule: 1 }],
    ['8.8.8.8:53', { kind: 'allow', rule: 2 }],
    ['10.1.2.3:80', { kind: 'deny', reason: 'no-match' }], // a port outside the rule
    ['11.0.0.1:443', { kind: 'deny', reason: 'no-match' }], // a CIDR outside the rules
    ['192.168.1.8:443', { kind: 'deny', reason: 'no-match' }],
    ['[fe80::1]:443', { kind: 'deny', reason: 'no-match' }],
  ];
  for (const [authority, verdict] of table) {
    const destination = parseIpAuthority(authority);
    assert.ok(destination !== undefined, authority);
    assert.deepEqual(decideEgress(policy, destination), verdict, authority);
  }
  assert.deepEqual(decideEgress(undefined, { ip: '10.0.0.1', port: 443 }), { kind: 'deny', reason: 'no-policy' });
  assert.deepEqual(decideEgress(parseEgressPolicy({ rules: [] }), { ip: '10.0.0.1', port: 443 }), { kind: 'deny', reason: 'no-rules' });
});

test('parseIpAuthority: an IP literal and a port, never a name', () => {
  assert.deepEqual(parseIpAuthority('127.0.0.1:9'), { ip: '127.0.0.1', port: 9 });
  assert.deepEqual(parseIpAuthority('[::1]:443'), { ip: '::1', port: 443 });
  for (const bad of ['example.com:443', '10.0.0.1', '10.0.0.1:0', '10.0.0.1:65536', '300.1.1.1:80', '::1:443', '[10.0.0.1]:80', '[::1]', `${'1'.repeat(70)}:80`, '', ' 10.0.0.1:80']) {
    assert.equal(parseIpAuthority(bad), undefined, bad);
  }
});

test('parseEgressPolicy: a bad policy is refused naming the field', () => {
  const cases: [unknown, RegExp][] = [
    [null, /expected \{"rules"/],
    [{ rules: [{ kind: 'hostnames' }] }, /rules\[0\]\.kind: expected "cidrs" or "all"/],
    [{ rules: [{ kind: 'cidrs', cidrs: [] }] }, /rules\[0\]\.cidrs: expected 1 to/],
    [{ rules: [{ kind: 'cidrs', cidrs: ['10.0.0.0/33'] }] }, /rules\[0\]\.cidrs\[0\]: "10\.0\.0\.0\/33" has a prefix outside 0-32/],
    [{ rules: [{ kind: 'cidrs', cidrs: ['example.com/8'] }] }, /is not a CIDR/],
    [{ rules: [{ kind: 'all', ports: [0] }] }, /rules\[0\]\.ports\[0\]: expected a port from 1 to 65535/],
    [{ rules: [{ kind: 'all', ports: [] }] }, /rules\[0\]\.ports: expected "all"/],
  ];
  for (const [value, message] of cases) assert.throws(() => parseEgressPolicy(value), (err: unknown) => err instanceof EgressPolicyError && message.test(err.message), JSON.stringify(value));
});

test('generated authorities never throw, and a destination is allowed only by a rule that matches it', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 70000 })).map(([ip, p]) => `${ip}:${p}`), fc.tuple(fc.ipV6(), fc.nat(70000)).map(([ip, p]) => `[${ip}]:${p}`)), (authority) => {
      const destination = parseIpAuthority(authority);
      if (destination === undefined) return;
      const verdict = decideEgress(policy, destination);
      if (verdict.kind === 'allow') assert.ok(policy.matchers[verdict.rule]?.(destination));
      else assert.ok(policy.matchers.every((m) => !m(destination)));
    }),
    { seed: 4141, numRuns: 500 },
  );
});
