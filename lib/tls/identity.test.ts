import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeSpiffeMatch, parseSpiffeMatch, refusePeerIdentity } from './identity.js';

test('a SPIFFE match is one ID, or every ID under a prefix ending in "/"; anything else is refused', () => {
  assert.deepEqual(parseSpiffeMatch('spiffe://cluster.local/ns/a/sa/proxy'), { kind: 'id', text: 'spiffe://cluster.local/ns/a/sa/proxy' });
  assert.deepEqual(parseSpiffeMatch('spiffe://cluster.local/ns/a/'), { kind: 'prefix', text: 'spiffe://cluster.local/ns/a/' });
  for (const bad of ['', 'https://cluster.local/x', 'spiffe://cluster.local', 'spiffe:///x', 'spiffe://a b/x']) assert.throws(() => parseSpiffeMatch(bad), bad);
  assert.equal(describeSpiffeMatch(parseSpiffeMatch('spiffe://td/ns/')), 'spiffe://td/ns/*');
});

test('an ID matches exactly (never as a prefix of a longer one); a prefix matches what is under it', () => {
  const id = parseSpiffeMatch('spiffe://td/ns/a/sa/proxy');
  assert.equal(refusePeerIdentity('URI:spiffe://td/ns/a/sa/proxy', id), undefined);
  assert.equal(refusePeerIdentity('DNS:x, URI:spiffe://other/x, URI:spiffe://td/ns/a/sa/proxy', id), undefined, 'any of its URI SANs');
  assert.match(refusePeerIdentity('URI:spiffe://td/ns/a/sa/proxy-evil', id) ?? '', /no URI SAN is spiffe:\/\/td\/ns\/a\/sa\/proxy$/);
  assert.match(refusePeerIdentity('DNS:proxy, IP Address:127.0.0.1', id) ?? '', /no URI SAN/);
  assert.match(refusePeerIdentity(undefined, id) ?? '', /no URI SAN/);
  const prefix = parseSpiffeMatch('spiffe://td/ns/a/');
  assert.equal(refusePeerIdentity('URI:spiffe://td/ns/a/sa/anything', prefix), undefined);
  assert.match(refusePeerIdentity('URI:spiffe://td/ns/ab/sa/x', prefix) ?? '', /no URI SAN is spiffe:\/\/td\/ns\/a\/\*/);
});
