import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { DevCa, type LeafSpec } from '../../lib/tls/dev-ca.js';
import { firstCertificate } from '../testing/egress-connect.js';
import { identityOfCertificate, MAX_CERTIFICATE_PEM } from './certificate-identity.js';

let dir: string;
let ca: DevCa;
const pem = async (spec: Omit<LeafSpec, 'commonName' | 'usage'>): Promise<string> =>
  firstCertificate(await readFile(await ca.issue({ commonName: 'x', usage: 'client-and-server', ...spec }), 'utf8'));

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-cert-identity-'));
  ca = await DevCa.create(dir, { name: 'actor-ca' });
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('the one URI SAN names the actor, in either form; the DNS and IP SANs beside it do not matter', async () => {
  const current = await pem({ name: 'current', uris: ['spiffe://substrate-actor.local/ateom-for-actor/team-a/counter-7'], dnsNames: ['x.example'] });
  assert.deepEqual(identityOfCertificate(current), { kind: 'actor', actor: { atespace: 'team-a', name: 'counter-7' } });
  const older = await pem({ name: 'older', uris: ['spiffe://substrate-actor.local/atespace/demo/actor/actor-001'], ips: ['127.0.0.1'] });
  assert.deepEqual(identityOfCertificate(older), { kind: 'actor', actor: { atespace: 'demo', name: 'actor-001' } });
  assert.equal(identityOfCertificate(`${current}${older}`).kind, 'actor', 'a chain: the leaf first');
});

test('refused, each saying why: no attribute, not PEM, too long, no or two URI SANs, a URI naming no actor', async () => {
  const cases: [string | undefined, RegExp][] = [
    [undefined, /no source\.certificate/],
    ['', /no source\.certificate/],
    ['hello', /not a PEM certificate/],
    ['-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', /not a PEM certificate/],
    ['x'.repeat(MAX_CERTIFICATE_PEM + 1), /more than/],
    [await pem({ name: 'dns-only', dnsNames: ['a.example'] }), /0 URI SANs/],
    [await pem({ name: 'two', uris: ['spiffe://substrate-actor.local/ateom-for-actor/a/b', 'spiffe://substrate-actor.local/ateom-for-actor/a/c'] }), /2 URI SANs/],
    [await pem({ name: 'domain', uris: ['spiffe://cluster.local/ateom-for-actor/a/b'] }), /names no actor/],
    [await pem({ name: 'upper', uris: ['spiffe://substrate-actor.local/ateom-for-actor/A/b'] }), /names no actor/],
    [await pem({ name: 'deep', uris: ['spiffe://substrate-actor.local/ateom-for-actor/a/b/c'] }), /names no actor/],
  ];
  for (const [input, detail] of cases) {
    const r = identityOfCertificate(input);
    assert.ok(r.kind === 'invalid' && detail.test(r.detail), `${String(input).slice(0, 30)}: ${JSON.stringify(r)}`);
  }
});

test('generated text never throws', () => {
  const pemLike = fc.string({ maxLength: 300 }).map((body) => `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`);
  const base64Like = fc.base64String({ maxLength: 600 }).map((body) => `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`);
  fc.assert(
    fc.property(fc.oneof(fc.string({ maxLength: 200 }), pemLike, base64Like), (text) => {
      assert.equal(identityOfCertificate(text).kind, 'invalid');
    }),
    { seed: 4545, numRuns: 500 },
  );
});
