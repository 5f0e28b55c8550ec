import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { ephemeralPortStart, freePort } from './loopback.js';

test('ephemeralPortStart: the first port of the kernel range; the IANA start where it cannot be read', () => {
  assert.equal(ephemeralPortStart(() => '32768\t60999\n'), 32768);
  assert.equal(ephemeralPortStart(() => '1024 65535'), 1024);
  assert.equal(ephemeralPortStart(() => 'garbage'), 49152);
  assert.equal(ephemeralPortStart(() => '0 0'), 49152);
  assert.equal(ephemeralPortStart(() => {
    throw new Error('ENOENT');
  }), 49152);
});

test('freePort: a port below the range outgoing connections take their source ports from, where nothing listens', async () => {
  const start = ephemeralPortStart();
  const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
  for (const port of ports) {
    assert.ok(port >= 10_000 && port < start, `${port} is in [10000, ${start})`);
    // Nothing listens there: a connection is refused.
    const refused = await new Promise<string>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve('connected');
      });
      s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    assert.equal(refused, 'ECONNREFUSED', `port ${port}`);
  }
  // Picked at random: twenty picks are not all one port.
  assert.ok(new Set(ports).size > 1, ports.join(', '));
});
