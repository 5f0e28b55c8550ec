import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFlags, UsageError } from '../../lib/flags.js';
import { INTERNAL_HEADERS } from '../../lib/wire-contract.js';
import { DRAIN_FLAGS } from '../ops/config.js';
import { TUNNEL_FLAGS } from '../tunnels/config.js';
import { ACTOR_SUFFIX_FLAGS, buildIngressSettings, CONNECTION_FLAGS, INGRESS_FLAGS, REPLAY_BODY_FLAGS } from './config.js';
import { LISTENER_FLAGS } from './listeners-config.js';

// The slice is built from its own flags and the three it reads of other slices, without the rest of the proxy's.
const FLAGS = { ...LISTENER_FLAGS, ...CONNECTION_FLAGS, ...REPLAY_BODY_FLAGS, ...DRAIN_FLAGS, ...INGRESS_FLAGS, ...TUNNEL_FLAGS, ...ACTOR_SUFFIX_FLAGS };
const ingress = (argv: string[]) => buildIngressSettings(readFlags(FLAGS, argv, {}).values);

test('the defaults: the internal headers stripped, no trusted hop, client request ids replaced, websocket only', () => {
  const c = ingress([]);
  // ingress-headers.test.ts checks the list itself; here: nothing is added to it by default.
  assert.deepEqual(c.stripHeaders, INTERNAL_HEADERS);
  assert.equal(c.xffTrustedHops, 0);
  assert.equal(c.requestIdTrusted, false);
  assert.deepEqual([...c.upgradeTokens], ['websocket']);
  assert.equal(c.misdirected421, false);
  assert.equal(c.drainIdleGraceMs, 1000);
  assert.equal(c.maxReplayBodyBytes, 1048576);
  assert.ok(Object.isFrozen(c) && Object.isFrozen(c.stripHeaders));
});

test('--strip-headers adds lower-cased names once, and refuses what is not a header name', () => {
  const c = ingress(['--strip-headers', 'X-Secret', '--strip-headers', 'x-secret']);
  assert.equal(c.stripHeaders.filter((h) => h === 'x-secret').length, 1);
  assert.throws(() => ingress(['--strip-headers', 'bad header']), (e: unknown) => e instanceof UsageError && /--strip-headers: "bad header" is not a header name/.test(e.message));
});

test('--request-id-trusted auto follows --xff-trusted-hops; on and off decide alone', () => {
  assert.equal(ingress(['--xff-trusted-hops', '1']).requestIdTrusted, true);
  assert.equal(ingress(['--xff-trusted-hops', '1', '--request-id-trusted', 'off']).requestIdTrusted, false);
  assert.equal(ingress(['--request-id-trusted', 'on']).requestIdTrusted, true);
});

test('--request-timeout-ms is 0 or at least --headers-timeout-ms', () => {
  assert.equal(ingress(['--request-timeout-ms', '0', '--headers-timeout-ms', '5000']).requestTimeoutMs, 0);
  assert.equal(ingress(['--request-timeout-ms', '5000', '--headers-timeout-ms', '5000']).requestTimeoutMs, 5000);
  assert.throws(() => ingress(['--request-timeout-ms', '4999', '--headers-timeout-ms', '5000']), /--request-timeout-ms must be 0 or at least --headers-timeout-ms/);
});

test('--misdirected-421 on needs an HTTPS listener; --actor-suffix is normalised', () => {
  assert.throws(() => ingress(['--misdirected-421', 'on']), /--misdirected-421 needs --tls-listen/);
  assert.equal(ingress(['--misdirected-421', 'on', '--tls-listen', '127.0.0.1:0']).misdirected421, true);
  assert.equal(ingress(['--actor-suffix', '.Actors.Example.']).actorSuffix, 'actors.example');
});
