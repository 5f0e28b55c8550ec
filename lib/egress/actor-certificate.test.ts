import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import fc from 'fast-check';
import { isResourceName } from '../actor-ref.js';
import { actorCertFixtures, BAD_ACTOR_CERTS, type ActorCertFixtures, type BadActorCert } from '../tls/testing/actor-certs.js';
import { ACTOR_TRUST_DOMAIN, actorIdentityOfUri, actorUri, checkActorCertificate, presentedCertificateOf, type ActorCertificateCheck } from './actor-certificate.js';

let f: ActorCertFixtures;
describe('actor-certificate', () => {
  before(async () => {
    f = await actorCertFixtures();
  });
  after(() => f.close());

  const x509 = (pem: string): X509Certificate => new X509Certificate(pem);
  const reasonOf = (check: ActorCertificateCheck): string => (check.kind === 'refused' ? check.reason : check.kind);

  test('actorIdentityOfUri: the newest form and the older one, with valid names; nothing else', () => {
    const ok: [string, { atespace: string; name: string }][] = [
      ['spiffe://substrate-actor.local/ateom-for-actor/team-a/agent-1', { atespace: 'team-a', name: 'agent-1' }],
      ['spiffe://substrate-actor.local/atespace/team-a/actor/agent-1', { atespace: 'team-a', name: 'agent-1' }],
      [`spiffe://substrate-actor.local/ateom-for-actor/${'a'.repeat(63)}/0`, { atespace: 'a'.repeat(63), name: '0' }],
    ];
    for (const [uri, actor] of ok) assert.deepEqual(actorIdentityOfUri(uri), actor, uri);
    const bad = [
      '',
      'spiffe://substrate-actor.local/ateom-for-actor/team-a',
      'spiffe://substrate-actor.local/ateom-for-actor/team-a/agent-1/',
      'spiffe://substrate-actor.local/ateom-for-actor/team-a/agent-1/x',
      'spiffe://substrate-actor.local/ateom-for-actor//agent-1',
      'spiffe://substrate-actor.local/ateom-for-actor/Team-A/agent-1',
      'spiffe://substrate-actor.local/ateom-for-actor/team_a/agent-1',
      'spiffe://substrate-actor.local/ateom-for-actor/team-a/agent-1-',
      `spiffe://substrate-actor.local/ateom-for-actor/team-a/${'a'.repeat(64)}`,
      'spiffe://substrate-actor.local/ateom-for-actor/team-a/agent%2D1',
      'spiffe://substrate-actor.local/ateom-for-actor/team-a/agent-1?x=1',
      'spiffe://substrate-actor.local/ateom-for-actor/team-a/agent-1#f',
      'spiffe://substrate-actor.local/ateom-for-actor/../agent-1',
      'spiffe://substrate-actor.local/atespace/team-a/actor',
      'spiffe://substrate-actor.local/atespace/team-a/actors/agent-1',
      'spiffe://substrate-actor.local/actor/team-a/agent-1',
      'spiffe://SUBSTRATE-ACTOR.LOCAL/ateom-for-actor/team-a/agent-1',
      'SPIFFE://substrate-actor.local/ateom-for-actor/team-a/agent-1',
      'spiffe://substrate-actor.local.evil/ateom-for-actor/team-a/agent-1',
      'spiffe://cluster.local/ateom-for-actor/team-a/agent-1',
      'https://substrate-actor.local/ateom-for-actor/team-a/agent-1',
      ' spiffe://substrate-actor.local/ateom-for-actor/team-a/agent-1',
    ];
    for (const uri of bad) assert.equal(actorIdentityOfUri(uri), undefined, uri);
    assert.equal(actorUri({ atespace: 'team-a', name: 'agent-1' }), ok[0]?.[0]);
  });

  const RESOURCE_NAME = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
  const olderUri = (atespace: string, name: string): string => `spiffe://${ACTOR_TRUST_DOMAIN}/atespace/${atespace}/actor/${name}`;

  test('generated: every valid pair of names reads back from both forms', () => {
    fc.assert(
      fc.property(RESOURCE_NAME, RESOURCE_NAME, (atespace, name) => {
        assert.deepEqual(actorIdentityOfUri(actorUri({ atespace, name })), { atespace, name });
        assert.deepEqual(actorIdentityOfUri(olderUri(atespace, name)), { atespace, name });
      }),
      { seed: 4343, numRuns: 300 },
    );
  });

  test('generated: any string, and URIs spliced from near-miss pieces, never throw; whatever is accepted is exactly one of the two forms', () => {
    const pieces = fc.constantFrom(
      'spiffe://', `${ACTOR_TRUST_DOMAIN}`, '/', '//', 'ateom-for-actor', 'atespace', 'actor', 'team-a', 'agent-1', 'A', '-', '_', '.', '..', '%2f', '?', '#', ' ', '\u0000', 'é', 'x'.repeat(64),
    );
    const spliced = fc.array(pieces, { maxLength: 12 }).map((parts) => parts.join(''));
    const nearForm = fc.tuple(fc.constantFrom('ateom-for-actor/', 'atespace/'), fc.string(), fc.constantFrom('/', '/actor/'), fc.string()).map(([a, b, c, d]) => `spiffe://${ACTOR_TRUST_DOMAIN}/${a}${b}${c}${d}`);
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), spliced, nearForm), (uri) => {
        const actor = actorIdentityOfUri(uri);
        if (actor === undefined) return;
        assert.ok(isResourceName(actor.atespace) && isResourceName(actor.name), uri);
        assert.ok(uri === actorUri(actor) || uri === olderUri(actor.atespace, actor.name), uri);
      }),
      { seed: 4344, numRuns: 2_000 },
    );
  });

  test('checkActorCertificate accepts a minted certificate: the actor, its URI, the sha256 of its DER and its NotAfter', () => {
    for (const cert of [f.good, f.goodOlderForm]) {
      const leaf = x509(cert.certPem);
      const check = checkActorCertificate({ leaf, authorized: true }, Date.now());
      assert.equal(check.kind, 'actor');
      if (check.kind !== 'actor') continue;
      assert.deepEqual(check.actor, f.actor);
      assert.equal(check.uri, leaf.subjectAltName?.slice('URI:'.length));
      assert.equal(check.digest, leaf.fingerprint256.replace(/:/g, '').toLowerCase());
      assert.match(check.digest, /^[0-9a-f]{64}$/);
      assert.equal(check.notAfterMs, Date.parse(leaf.validTo));
    }
  });

  test('checkActorCertificate refuses every bad variant with its reason (as the TLS layer reports each)', () => {
    // What node reports for each variant when it verifies the chain against the actor CA (the handshake test shows it does).
    const tls: Partial<Record<BadActorCert, string>> = {
      'other-ca': 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      expired: 'CERT_HAS_EXPIRED',
      'not-yet-valid': 'CERT_NOT_YET_VALID',
      'server-auth-only': 'INVALID_PURPOSE',
    };
    for (const [variant, reason] of Object.entries(BAD_ACTOR_CERTS) as [BadActorCert, string][]) {
      const code = tls[variant];
      const check = checkActorCertificate({ leaf: x509(f.bad[variant].certPem), authorized: code === undefined, authorizationError: code }, Date.now());
      assert.equal(reasonOf(check), reason, variant);
      assert.ok(check.kind === 'refused' && check.detail.length > 0, variant);
    }
    assert.deepEqual(checkActorCertificate({ leaf: undefined, authorized: false, authorizationError: 'UNABLE_TO_GET_ISSUER_CERT' }, Date.now()), {
      kind: 'refused',
      reason: 'no-certificate',
      detail: 'no client certificate was presented',
    });
  });

  test('checkActorCertificate: a chain the TLS layer did not verify is refused whatever the certificate says', () => {
    const leaf = x509(f.good.certPem);
    for (const code of [undefined, 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_SIGNATURE_FAILURE']) {
      assert.equal(reasonOf(checkActorCertificate({ leaf, authorized: false, authorizationError: code }, Date.now())), 'untrusted', String(code));
    }
    // A purpose error on a certificate whose usage is fine is still the chain's problem.
    assert.equal(reasonOf(checkActorCertificate({ leaf, authorized: false, authorizationError: 'INVALID_PURPOSE' }, Date.now())), 'untrusted');
    // node's word on expiry is taken as it is (its clock); the certificate's own window is checked on ours.
    assert.equal(reasonOf(checkActorCertificate({ leaf, authorized: false, authorizationError: 'CERT_HAS_EXPIRED' }, Date.now())), 'expired');
  });

  test('checkActorCertificate: the validity window is checked against the clock it is given, to the millisecond', () => {
    const leaf = x509(f.good.certPem);
    const notBefore = Date.parse(leaf.validFrom);
    const notAfter = Date.parse(leaf.validTo);
    const at = (nowMs: number): string => reasonOf(checkActorCertificate({ leaf, authorized: true }, nowMs));
    assert.equal(at(notBefore - 1), 'not-yet-valid');
    assert.equal(at(notBefore), 'actor');
    assert.equal(at(notAfter), 'actor');
    assert.equal(at(notAfter + 1), 'expired');
    // Authorized by a TLS layer with another clock: an expired certificate is still refused on ours.
    const expired = x509(f.bad.expired.certPem);
    assert.equal(reasonOf(checkActorCertificate({ leaf: expired, authorized: true }, Date.now())), 'expired');
    const early = x509(f.bad['not-yet-valid'].certPem);
    assert.equal(reasonOf(checkActorCertificate({ leaf: early, authorized: true }, Date.now())), 'not-yet-valid');
    assert.equal(reasonOf(checkActorCertificate({ leaf: early, authorized: true }, Date.parse(early.validFrom))), 'actor');
  });

  test('checkActorCertificate is pure: the same input gives the same answer', () => {
    const leaf = x509(f.good.certPem);
    const now = Date.now();
    assert.deepEqual(checkActorCertificate({ leaf, authorized: true }, now), checkActorCertificate({ leaf: x509(f.good.certPem), authorized: true }, now));
  });

  test('presentedCertificateOf reads node\'s authorizationError as the code string it is at run time, or from an Error', () => {
    const leaf = x509(f.good.certPem);
    const socket = (authorized: boolean, authorizationError: unknown) => ({ getPeerX509Certificate: () => leaf, authorized, authorizationError: authorizationError as Error });
    assert.deepEqual(presentedCertificateOf(socket(false, 'CERT_HAS_EXPIRED')), { leaf, authorized: false, authorizationError: 'CERT_HAS_EXPIRED' });
    const err = Object.assign(new Error('certificate has expired'), { code: 'CERT_HAS_EXPIRED' });
    assert.equal(presentedCertificateOf(socket(false, err)).authorizationError, 'CERT_HAS_EXPIRED');
    assert.equal(presentedCertificateOf(socket(true, null)).authorizationError, undefined);
  });
});
