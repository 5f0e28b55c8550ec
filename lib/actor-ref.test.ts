import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseActorHost, isResourceName, normaliseSuffix } from './actor-ref.js';

const S = 'actors.resources.substrate.ate.dev';

test('parses name, atespace and default port', () => {
  const r = parseActorHost(`counter-7.team-a.${S}`);
  assert.equal(r.kind, 'ok');
  if (r.kind !== 'ok') return;
  assert.deepEqual(r.actor.ref, { atespace: 'team-a', name: 'counter-7' });
  assert.equal(r.actor.key, 'team-a/counter-7');
  assert.equal(r.actor.port, 80);
});

test('explicit port, trailing dot and ASCII upper case are accepted', () => {
  const r = parseActorHost(`Counter-7.TEAM-A.${S}.:8080`);
  assert.equal(r.kind, 'ok');
  if (r.kind !== 'ok') return;
  assert.equal(r.actor.key, 'team-a/counter-7');
  assert.equal(r.actor.port, 8080);
});

for (const [label, host] of [
  ['empty', ''],
  ['wrong suffix', 'a.b.example.com'],
  ['extra label', `sub.actor-1.team-a.${S}`],
  ['missing atespace', `actor-1.${S}`],
  ['non-ASCII (Kelvin sign)', `\u212Aelvin.team-a.${S}`],
  ['64-character label', `${'a'.repeat(64)}.team-a.${S}`],
  ['port 0', `a.b.${S}:0`],
  ['port 65536', `a.b.${S}:65536`],
  ['non-numeric port', `a.b.${S}:http`],
  ['empty port', `a.b.${S}:`],
  ['two trailing dots', `a.b.${S}..`],
  ['label ending in dash', `a-.b.${S}`],
  ['underscore', `a_b.c.${S}`],
  ['IPv6 literal', '[::1]:80'],
] as const) {
  test(`rejects ${label}`, () => {
    assert.equal(parseActorHost(host).kind, 'invalid');
  });
}

test('63-character labels are accepted', () => {
  assert.equal(parseActorHost(`${'a'.repeat(63)}.${'b'.repeat(63)}.${S}`).kind, 'ok');
});

test('custom suffix', () => {
  const suffix = normaliseSuffix('.Actors.Example.');
  assert.equal(suffix, 'actors.example');
  const r = parseActorHost('x.y.actors.example', suffix);
  assert.equal(r.kind, 'ok');
  assert.equal(parseActorHost(`x.y.${S}`, suffix).kind, 'invalid');
});

test('isResourceName', () => {
  assert.ok(isResourceName('actor-000'));
  assert.ok(!isResourceName('-a'));
  assert.ok(!isResourceName('A'));
  assert.ok(!isResourceName(''));
});
