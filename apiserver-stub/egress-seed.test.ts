import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { UsageError } from '../lib/flags.js';
import { readStubConfig } from './config.js';
import { NO_EGRESS_SEED, parseEgressSeed, seededPolicy } from './egress-seed.js';
import { seedActorNames } from './seed.js';

const names = () => seedActorNames(3);
const ALLOW = { rules: [{ kind: 'cidrs', cidrs: ['127.0.0.1/32'], ports: [9000] }] };

test('per-actor policies, "*" for the others, none without either', () => {
  const seed = parseEgressSeed(JSON.stringify({ 'actor-001': ALLOW, '*': { rules: [] } }), names);
  assert.deepEqual(seededPolicy(seed, 'actor-001')?.rules, ALLOW.rules);
  assert.deepEqual(seededPolicy(seed, 'actor-000')?.rules, []);
  const only = parseEgressSeed(JSON.stringify({ 'actor-002': ALLOW }), names);
  assert.equal(seededPolicy(only, 'actor-000'), undefined);
  assert.equal(parseEgressSeed('', names), NO_EGRESS_SEED);
  assert.equal(parseEgressSeed('  ', () => assert.fail('names are listed only when needed')), NO_EGRESS_SEED);
});

test('bad values are usage errors naming the flag, the key and the field', () => {
  const cases: [string, RegExp][] = [
    ['{', /^--seed-egress-policies: not JSON/],
    ['[]', /expected a JSON object of actor name/],
    ['"x"', /expected a JSON object of actor name/],
    [JSON.stringify({ 'actor-009': ALLOW }), /"actor-009" is not a seeded actor \(the seeded actors are actor-000 … actor-002\)/],
    [JSON.stringify({ 'Actor 1': ALLOW }), /"Actor 1" is not an actor name/],
    [JSON.stringify({ 'actor-000': { rules: [{ kind: 'all', ports: [0] }] } }), /"actor-000": rules\[0\]\.ports\[0\]: expected a port/],
    [JSON.stringify({ '*': 7 }), /"\*": expected \{"rules"/],
  ];
  for (const [text, message] of cases) assert.throws(() => parseEgressSeed(text, names), (err: unknown) => err instanceof UsageError && message.test(err.message), text);
  assert.throws(() => parseEgressSeed(JSON.stringify({ 'actor-000': ALLOW }), () => []), /no actors are seeded/);
});

test('generated values: a seed or a UsageError, never anything else', () => {
  fc.assert(
    fc.property(fc.oneof(fc.json(), fc.string(), fc.dictionary(fc.constantFrom('actor-000', '*', 'actor-009', 'x'), fc.jsonValue()).map((v) => JSON.stringify(v))), (text) => {
      try {
        parseEgressSeed(text, names);
      } catch (err) {
        assert.ok(err instanceof UsageError, String(err));
      }
    }),
    { seed: 4343, numRuns: 500 },
  );
});

test('--seed-egress-policies and its variable reach the stub config', () => {
  const read = readStubConfig(['--actors', '2', '--seed-egress-policies', JSON.stringify({ 'actor-001': ALLOW })], {});
  assert.equal(read.kind, 'config');
  if (read.kind !== 'config') return;
  assert.deepEqual(seededPolicy(read.config.egressSeed, 'actor-001')?.rules, ALLOW.rules);
  const env = readStubConfig([], { APISERVER_SEED_EGRESS_POLICIES: JSON.stringify({ '*': ALLOW }) });
  assert.ok(env.kind === 'config' && seededPolicy(env.config.egressSeed, 'actor-099') !== undefined);
  assert.throws(() => readStubConfig(['--actors', '2', '--seed-egress-policies', JSON.stringify({ 'actor-002': ALLOW })], {}), UsageError);
});
