import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decideEgress, decideHostname, EgressPolicyError, parseEgressPolicy, parseIpAuthority, type CheckedEgressPolicy, type EgressDestination, type EgressVerdict } from './policy.js';
import { hostnameMatches, observedName } from './hostname-pattern.js';

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
    [{ rules: [{ kind: 'tls' }] }, /rules\[0\]\.kind: expected "cidrs", "all" or "hostnames"/],
    [{ rules: [{ kind: 'hostnames' }] }, /rules\[0\]\.hostnames: expected 1 to 1024 hostname patterns/],
    [{ rules: [{ kind: 'hostnames', hostnames: [] }] }, /rules\[0\]\.hostnames: expected 1 to 1024/],
    [{ rules: [{ kind: 'all' }, { kind: 'hostnames', hostnames: ['a.b', '*.*.c'] }] }, /rules\[1\]\.hostnames\[1\]: "\*\.\*\.c" is not a hostname pattern/],
    [{ rules: [{ kind: 'hostnames', hostnames: ['10.0.0.1'] }] }, /is not a hostname pattern/],
    [{ rules: Array.from({ length: 5 }, () => ({ kind: 'hostnames', hostnames: Array.from({ length: 1000 }, (_, i) => `h${i}.test`) })) }, /rules\[4\]\.hostnames: a policy has at most 4096 hostname patterns/],
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
      else assert.equal(verdict.kind === 'deny' && policy.matchers.every((m) => !m(destination)), true);
    }),
    { seed: 4141, numRuns: 500 },
  );
});

const hostnamePolicy = parseEgressPolicy({
  rules: [
    { kind: 'hostnames', hostnames: ['API.example.com'], ports: [443] },
    { kind: 'cidrs', cidrs: ['10.0.0.0/8'], ports: [443] },
    { kind: 'hostnames', hostnames: ['*.example.com', 'plain.test'], ports: [443, 80] },
    { kind: 'hostnames', hostnames: ['*'], ports: [8080] },
    { kind: 'all', ports: [8080] },
  ],
});

test('hostname rules: patterns lowered; a destination only hostname rules on its port can allow is decided on the traffic', () => {
  assert.deepEqual(hostnamePolicy.rules[0], { kind: 'hostnames', hostnames: ['api.example.com'], ports: [443] });
  const table: [string, EgressVerdict][] = [
    // No cidrs or all rule matches 1.2.3.4:443: the hostname rules on 443, in order.
    ['1.2.3.4:443', { kind: 'hostnames', rules: [{ rule: 0, hostnames: ['api.example.com'] }, { rule: 2, hostnames: ['*.example.com', 'plain.test'] }] }],
    // Port 80: only rule 2 is on it (a hostname rule limited to its ports).
    ['1.2.3.4:80', { kind: 'hostnames', rules: [{ rule: 2, hostnames: ['*.example.com', 'plain.test'] }] }],
    // A cidrs rule matches: allowed whatever the hostname (rule 0 only comes first for some of them; rules only allow).
    ['10.1.1.1:443', { kind: 'allow', rule: 1 }],
    ['10.1.1.1:80', { kind: 'hostnames', rules: [{ rule: 2, hostnames: ['*.example.com', 'plain.test'] }] }],
    // "*" before an all rule on 8080: the all rule allows every connection anyway.
    ['1.2.3.4:8080', { kind: 'allow', rule: 4 }],
    ['1.2.3.4:22', { kind: 'deny', reason: 'no-match' }],
  ];
  for (const [authority, verdict] of table) assert.deepEqual(decideEgress(hostnamePolicy, parseIpAuthority(authority)!), verdict, authority);
});

test('decideHostname: the first candidate whose patterns match; none without a name', () => {
  const verdict = decideEgress(hostnamePolicy, { ip: '1.2.3.4', port: 443 });
  assert.ok(verdict.kind === 'hostnames');
  const decide = (raw: string | undefined) => decideHostname(verdict.rules, raw === undefined ? undefined : observedName(raw));
  assert.equal(decide('api.example.com'), 0, 'exact, before the wildcard that matches it too');
  assert.equal(decide('API.EXAMPLE.COM'), 0);
  assert.equal(decide('www.example.com'), 2);
  assert.equal(decide('plain.test'), 2);
  assert.equal(decide('a.b.example.com'), undefined, 'one label only');
  assert.equal(decide('example.com'), undefined);
  assert.equal(decide('10.0.0.1'), undefined);
  assert.equal(decide(undefined), undefined);
});

/**
 * The definition, on generated policies and connections: a connection (IP, port, hostname or none) is allowed by the
 * first rule that matches it. What `decideEgress` answers for the CONNECT, completed by `decideHostname` on the
 * traffic, must allow exactly the connections that first match allows, by the same rule unless a cidrs or all rule
 * allows the destination whatever its hostname.
 */
test('generated policies: CONNECT verdict then traffic decision = first match over the whole connection', () => {
  const names = ['a.example.com', 'b.example.com', 'example.com', 'x.a.example.com', 'other.test'];
  const pattern = fc.constantFrom('a.example.com', '*.example.com', 'example.com', '*', 'other.test', 'OTHER.test');
  const ports = fc.oneof(fc.constant('all' as const), fc.subarray([80, 443, 8080], { minLength: 1 }));
  const rule = fc.oneof(
    fc.record({ kind: fc.constant('hostnames'), hostnames: fc.array(pattern, { minLength: 1, maxLength: 3 }), ports }),
    fc.record({ kind: fc.constant('cidrs'), cidrs: fc.subarray(['10.0.0.0/8', '127.0.0.1/32', '::/0'], { minLength: 1 }), ports }),
    fc.record({ kind: fc.constant('all'), ports }),
  );
  const connection = fc.record({ ip: fc.constantFrom('10.1.2.3', '127.0.0.1', '127.0.0.2', '::1'), port: fc.constantFrom(80, 443, 8080, 22), name: fc.option(fc.constantFrom(...names, 'A.EXAMPLE.com')) });
  fc.assert(
    fc.property(fc.array(rule, { maxLength: 6 }), connection, (rules, c) => {
      const policy: CheckedEgressPolicy = parseEgressPolicy({ rules });
      const destination: EgressDestination = { ip: c.ip, port: c.port };
      const name = c.name === null ? undefined : observedName(c.name);
      const firstMatch = policy.rules.findIndex((r, i) => policy.matchers[i]!(destination) && (r.kind !== 'hostnames' || (name !== undefined && r.hostnames.some((p) => hostnameMatches(p, name)))));
      const verdict = decideEgress(policy, destination);
      const allowedBy = verdict.kind === 'allow' ? verdict.rule : verdict.kind === 'hostnames' ? decideHostname(verdict.rules, name) : undefined;
      assert.equal(allowedBy !== undefined, firstMatch !== -1, 'allowed exactly when some rule matches');
      if (verdict.kind === 'hostnames') assert.equal(allowedBy ?? -1, firstMatch, 'decided on the traffic: the first match itself');
      if (verdict.kind === 'allow') assert.ok(rules[verdict.rule]!.kind !== 'hostnames' && verdict.rule >= firstMatch);
    }),
    { seed: 4451, numRuns: 1000 },
  );
});
