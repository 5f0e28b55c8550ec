import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { asciiLower, checkHostnamePattern, hostnameMatches, isDnsName, observedName } from './hostname-pattern.js';

test('patterns: an exact name, *. and a name, or *; lowered; anything else refused', () => {
  assert.equal(checkHostnamePattern('API.Example.com'), 'api.example.com');
  assert.equal(checkHostnamePattern('*.Example.com'), '*.example.com');
  assert.equal(checkHostnamePattern('*'), '*');
  assert.equal(checkHostnamePattern('xn--bcher-kva.example'), 'xn--bcher-kva.example');
  assert.equal(checkHostnamePattern(`${'a'.repeat(63)}.b`), `${'a'.repeat(63)}.b`);
  for (const bad of ['', '*.', '**', '*.*.example.com', 'a.*.example.com', '*example.com', 'example.com.', '.example.com', 'a..b', '-a.b', 'a-.b', 'a_b.c', 'a b', '10.0.0.1', 'host.123', `${'a'.repeat(64)}.b`, `${'a.'.repeat(127)}bb`, 'bücher.example', '[::1]', 'a.b:443', 42, null]) {
    assert.equal(checkHostnamePattern(bad), undefined, JSON.stringify(bad));
  }
});

test('matching: exact, one label for *., anything for *; ASCII case-insensitive; names that are not DNS names match nothing', () => {
  const table: [string, string, boolean][] = [
    ['api.example.com', 'api.example.com', true],
    ['api.example.com', 'API.EXAMPLE.COM', true],
    ['api.example.com', 'api.example.com.', true],
    ['api.example.com', 'x.api.example.com', false],
    ['*.example.com', 'a.example.com', true],
    ['*.example.com', 'A.Example.Com', true],
    ['*.example.com', 'example.com', false],
    ['*.example.com', 'a.b.example.com', false],
    ['*.example.com', 'aexample.com', false],
    ['*.example.com', '.example.com', false],
    ['*', 'anything.test', true],
    ['*', 'localhost', true],
    ['*', '10.0.0.1', false],
    ['*', '[::1]', false],
    ['*', 'a_b.test', false],
    ['*', 'KELVIN\u212a.test', false],
  ];
  for (const [pattern, raw, expected] of table) {
    const name = observedName(raw);
    assert.equal(name !== undefined && hostnameMatches(checkHostnamePattern(pattern)!, name), expected, `${pattern} ~ ${raw}`);
  }
});

test('generated names: a name matches itself in any case, its one-label wildcard, and no wildcard of another depth', () => {
  const anyCase = (s: string, flips: boolean[]) => [...s].map((c, i) => (flips[i % Math.max(1, flips.length)] ? c.toUpperCase() : c)).join('');
  fc.assert(
    fc.property(fc.domain(), fc.array(fc.boolean(), { maxLength: 20 }), fc.stringMatching(/^[a-z0-9]{1,10}$/), (domain, flips, label) => {
      assert.ok(isDnsName(domain), domain);
      const name = observedName(anyCase(`${label}.${domain}`, flips));
      assert.equal(name, `${label}.${domain}`);
      assert.ok(hostnameMatches(checkHostnamePattern(anyCase(`${label}.${domain}`, flips.slice(1)))!, name));
      assert.ok(hostnameMatches(checkHostnamePattern(`*.${domain}`)!, name));
      assert.ok(!hostnameMatches(checkHostnamePattern(`*.${domain}`)!, domain));
      assert.ok(!hostnameMatches(checkHostnamePattern(`*.${domain}`)!, `x.${name}`));
      assert.equal(asciiLower(anyCase(domain, flips)), domain);
    }),
    { seed: 4421, numRuns: 300 },
  );
  fc.assert(
    fc.property(fc.string(), fc.string(), (pattern, raw) => {
      const p = checkHostnamePattern(pattern);
      const n = observedName(raw);
      if (p !== undefined && n !== undefined) assert.equal(typeof hostnameMatches(p, n), 'boolean');
      if (n !== undefined) assert.ok(isDnsName(n));
    }),
    { seed: 4422, numRuns: 500 },
  );
});
