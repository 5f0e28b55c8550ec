import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { DEFAULT_NEVER_DIAL, ForbiddenDestinations, NeverDialError, RANGE_MEMO_ENTRIES } from './forbidden-destinations.js';

test('by default: unspecified, link-local (cloud metadata), multicast, broadcast and IPv4-mapped IPv6 are never dialled; ordinary addresses are the policy\'s', () => {
  const f = new ForbiddenDestinations();
  const refused = ['0.0.0.0', '169.254.169.254', '224.0.0.1', '239.1.2.3', '255.255.255.255', '::', '::ffff:127.0.0.1', '::ffff:10.0.0.1', 'fe80::1', 'ff02::1'];
  for (const ip of refused) assert.match(f.refuses(ip, 80) ?? '', /never dials/, ip);
  for (const ip of ['10.0.0.1', '127.0.0.2', '93.184.216.34', '2001:db8::1', '::1']) assert.equal(f.refuses(ip, 80), undefined, ip);
});

test("the proxy's own listeners are never dialled: exactly where bound, and on every loopback and host address when bound to the wildcard", () => {
  const f = new ForbiddenDestinations([]);
  f.addOwnListener('127.0.0.1', 9901);
  assert.match(f.refuses('127.0.0.1', 9901) ?? '', /own listeners/);
  assert.equal(f.refuses('127.0.0.1', 9902), undefined, 'another port');
  assert.equal(f.refuses('127.0.0.2', 9901), undefined, 'a listener on 127.0.0.1 is not reached on 127.0.0.2');
  f.addOwnListener('0.0.0.0', 9443);
  for (const ip of ['127.0.0.1', '127.0.0.2', '127.9.9.9']) assert.match(f.refuses(ip, 9443) ?? '', /own listeners/, ip);
});

test('--egress-never-dial entries that are not CIDRs are refused by position; any CIDR list is accepted and matches what it names', () => {
  assert.throws(() => new ForbiddenDestinations(['10.0.0.0/8', 'nope']), (e: unknown) => e instanceof NeverDialError && /\[1\]: "nope"/.test(e.message));
  assert.throws(() => new ForbiddenDestinations(['10.0.0.0/33']), NeverDialError);
  assert.throws(() => new ForbiddenDestinations(['10.0.0.0/8/1']), NeverDialError);
  assert.ok(DEFAULT_NEVER_DIAL.length > 0);
  fc.assert(
    fc.property(fc.ipV4(), fc.integer({ min: 0, max: 32 }), (ip, prefix) => {
      const f = new ForbiddenDestinations([`${ip}/${prefix}`]);
      return f.refuses(ip, 1) !== undefined;
    }),
    { seed: 4311, numRuns: 200 },
  );
});

test('range checks are remembered per address, bounded, and answer as a fresh check does, before and after the memory starts over', () => {
  const remembering = new ForbiddenDestinations();
  const answerOf = (f: ForbiddenDestinations, ip: string): boolean => f.refuses(ip, 1) !== undefined;
  fc.assert(
    fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), (ip) => {
      const fresh = answerOf(new ForbiddenDestinations(), ip);
      return answerOf(remembering, ip) === fresh && answerOf(remembering, ip) === fresh;
    }),
    { seed: 4312, numRuns: 300 },
  );
  // Many distinct addresses (an actor naming a new one per CONNECT): the memory never passes its bound.
  for (let i = 0; i < RANGE_MEMO_ENTRIES + 100; i++) remembering.refuses(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`, 1);
  assert.ok(remembering.rememberedAddresses <= RANGE_MEMO_ENTRIES, `${remembering.rememberedAddresses} remembered`);
  assert.ok(remembering.rememberedAddresses > 0);
  assert.match(remembering.refuses('169.254.169.254', 80) ?? '', /never dials/, 'still refused after the memory started over');
  assert.equal(remembering.refuses('10.0.0.1', 80), undefined);
});
