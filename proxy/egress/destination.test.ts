/**
 * The CONNECT authority the egress listener accepts: `IP:port` only, at most 64 bytes, normalised so that one
 * address is one key — on a table and on generated authorities.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import fc from 'fast-check';
import { egressDestinationOf } from './destination.js';

test('IP:port accepted and normalised; names, missing or out-of-range ports, zones and long authorities refused', () => {
  assert.deepEqual(egressDestinationOf('10.1.2.3:443'), { ip: '10.1.2.3', port: 443, authority: '10.1.2.3:443' });
  assert.deepEqual(egressDestinationOf('127.0.0.1:0080'), { ip: '127.0.0.1', port: 80, authority: '127.0.0.1:80' });
  assert.deepEqual(egressDestinationOf('[FD00:0:0::1]:9000'), { ip: 'fd00::1', port: 9000, authority: '[fd00::1]:9000' });
  for (const refused of ['example.com:443', '10.1.2.3', '10.1.2.3:', '10.1.2.3:0', '10.1.2.3:65536', '[::1]', '::1:80', '[fe80::1%eth0]:80', '010.1.2.3:80', ' 10.1.2.3:80', '10.1.2.3:80 ', '', `[${'0:'.repeat(30)}1]:80`]) {
    assert.equal(egressDestinationOf(refused), undefined, refused);
  }
});

test('generated authorities: accepted ones are IP:port of at most 64 bytes, normalise to themselves, and dial the same address', () => {
  const authority = fc.oneof(
    fc.string({ maxLength: 80 }),
    fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 70000 })).map(([ip, p]) => `${ip}:${p}`),
    fc.tuple(fc.ipV6(), fc.integer({ min: 0, max: 70000 })).map(([ip, p]) => `[${ip}]:${p}`),
    fc.tuple(fc.ipV6(), fc.boolean()).map(([ip, upper]) => `[${upper ? ip.toUpperCase() : ip}]:443`),
    fc.tuple(fc.domain(), fc.nat(65535)).map(([d, p]) => `${d}:${p}`),
  );
  fc.assert(
    fc.property(authority, (a) => {
      const d = egressDestinationOf(a);
      if (d === undefined) return;
      assert.ok(Buffer.byteLength(a) <= 64);
      assert.ok(net.isIP(d.ip) !== 0 && d.port >= 1 && d.port <= 65535);
      assert.deepEqual(egressDestinationOf(d.authority), d, 'normalised once is normalised');
      assert.equal(d.authority, net.isIPv6(d.ip) ? `[${d.ip}]:${d.port}` : `${d.ip}:${d.port}`);
    }),
    { seed: 4242, numRuns: 1000 },
  );
});
