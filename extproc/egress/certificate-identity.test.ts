import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { actorCertFixtures, BAD_ACTOR_CERTS, type ActorCertFixtures, type BadActorCert } from '../../lib/tls/testing/actor-certs.js';
import { identityOfCertificate, MAX_CERTIFICATE_PEM } from './certificate-identity.js';

let f: ActorCertFixtures;
describe('certificate-identity', () => {
  before(async () => {
    f = await actorCertFixtures();
  });
  after(() => f.close());

  test('a minted certificate names its actor, in either URI form; a chain is read by its leaf', () => {
    assert.deepEqual(identityOfCertificate(f.good.certPem), { kind: 'actor', actor: f.actor });
    assert.deepEqual(identityOfCertificate(f.goodOlderForm.certPem), { kind: 'actor', actor: f.actor });
    assert.deepEqual(identityOfCertificate(f.good.bundle), { kind: 'actor', actor: f.actor }, 'the key after it is ignored');
  });

  test('every bad variant but another CA is refused with its reason (the chain is the data plane\'s to verify)', () => {
    for (const name of Object.keys(BAD_ACTOR_CERTS) as BadActorCert[]) {
      const r = identityOfCertificate(f.bad[name].certPem);
      if (name === 'other-ca') {
        assert.deepEqual(r, { kind: 'actor', actor: f.actor }, 'extproc does not hold the actor identity CA');
        continue;
      }
      assert.ok(r.kind === 'invalid' && r.detail.startsWith(`${BAD_ACTOR_CERTS[name]}: `), `${name}: ${JSON.stringify(r)}`);
    }
  });

  test('checked now: a certificate that expired since the connection opened is refused', () => {
    const r = identityOfCertificate(f.good.certPem, Date.now() + 2 * 60 * 60_000);
    assert.ok(r.kind === 'invalid' && r.detail.startsWith('expired: '), JSON.stringify(r));
  });

  test('no attribute, not PEM, too long: refused unparsed or with the parser\'s reason', () => {
    const cases: [string | undefined, RegExp][] = [
      [undefined, /no source\.certificate/],
      ['', /no source\.certificate/],
      ['hello', /not a PEM certificate/],
      ['-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', /not a PEM certificate/],
      ['x'.repeat(MAX_CERTIFICATE_PEM + 1), /more than/],
    ];
    for (const [input, detail] of cases) {
      const r = identityOfCertificate(input);
      assert.ok(r.kind === 'invalid' && detail.test(r.detail), `${String(input).slice(0, 30)}: ${JSON.stringify(r)}`);
    }
  });

  test('generated text, and a good certificate with bytes changed: an identity or invalid, never a throw', () => {
    const pemLike = fc.string({ maxLength: 300 }).map((body) => `-----BEGIN CERTIFICATE-----\n${body}\n-----END CERTIFICATE-----\n`);
    const der = Buffer.from(f.good.certPem.replace(/-----[A-Z ]+-----|\s/g, ''), 'base64');
    const flipped = fc.array(fc.tuple(fc.nat(der.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }).map((flips) => {
      const copy = Buffer.from(der);
      for (const [at, byte] of flips) copy[at] = byte;
      return `-----BEGIN CERTIFICATE-----\n${copy.toString('base64').replace(/.{64}/g, '$&\n')}\n-----END CERTIFICATE-----\n`;
    });
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 200 }), pemLike, flipped), (text) => {
        const r = identityOfCertificate(text);
        assert.ok(r.kind === 'invalid' || r.kind === 'actor');
      }),
      { seed: 4545, numRuns: 500 },
    );
  });
});
