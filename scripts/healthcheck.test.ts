import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { healthy } from './healthcheck.js';

test('http: healthy on 2xx only; tcp: healthy when the port accepts; a closed port is not', async () => {
  const server = http.createServer((req, res) => {
    res.statusCode = req.url === '/ready' ? 200 : 503;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as net.AddressInfo).port;
  try {
    assert.equal(await healthy(`http://127.0.0.1:${port}/ready`), true);
    assert.equal(await healthy(`http://127.0.0.1:${port}/draining`), false);
    assert.equal(await healthy(`tcp://127.0.0.1:${port}`), true);
  } finally {
    await new Promise((r) => server.close(r));
  }
  assert.equal(await healthy(`tcp://127.0.0.1:${port}`), false);
  assert.equal(await healthy(`http://127.0.0.1:${port}/ready`), false);
  await assert.rejects(healthy('ftp://127.0.0.1:1/'), /neither http/);
});
