import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeHostnameRules, encodeHostnameRules } from './wire.js';

test('hostname rules as JSON text: they survive the round trip; a text that is not a valid list of them is refused', () => {
  const rules = [
    { rule: 0, hostnames: ['api.example.com'] },
    { rule: 4, hostnames: ['*.example.com', '*'] },
  ];
  const text = encodeHostnameRules(rules);
  assert.equal(text, '[{"rule":0,"hostnames":["api.example.com"]},{"rule":4,"hostnames":["*.example.com","*"]}]');
  assert.deepEqual(decodeHostnameRules(text), rules);
  assert.deepEqual(decodeHostnameRules('[{"rule":1,"hostnames":["API.Example.com"]}]'), [{ rule: 1, hostnames: ['api.example.com'] }]);
  for (const bad of ['', 'nope', '{}', '[]', '[{"rule":-1,"hostnames":["a.b"]}]', '[{"rule":1.5,"hostnames":["a.b"]}]', '[{"rule":2,"hostnames":["a.b"]},{"rule":2,"hostnames":["a.b"]}]', '[{"rule":0,"hostnames":[]}]', '[{"rule":0,"hostnames":["a..b"]}]', '[{"rule":0}]', '[null]', `[{"rule":0,"hostnames":["${'a'.repeat(3 * 1024 * 1024)}"]}]`]) {
    assert.equal(typeof decodeHostnameRules(bad), 'string', bad.slice(0, 60));
  }
});

test('generated texts: a list of valid rules or a reason, never a throw', () => {
  fc.assert(
    fc.property(fc.oneof(fc.string(), fc.json(), fc.array(fc.record({ rule: fc.integer({ min: -1, max: 5 }), hostnames: fc.array(fc.oneof(fc.domain(), fc.string()), { maxLength: 3 }) })).map((v) => JSON.stringify(v))), (text) => {
      const r = decodeHostnameRules(text);
      if (typeof r !== 'string') assert.ok(r.length > 0 && r.every((x, i) => x.hostnames.length > 0 && (i === 0 || x.rule > r[i - 1]!.rule)));
    }),
    { seed: 4461, numRuns: 500 },
  );
});
