import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pacedLoad } from './overload-hits.js';

test('paced hit load: answers by status, each counted once through the hooks, nothing counted after the stop', async () => {
  const server = http.createServer((req, res) => {
    res.statusCode = req.headers.host === 'busy' ? 503 : 200;
    res.end('x');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  try {
    let stop!: () => void;
    const until = new Promise<void>((resolve) => (stop = resolve));
    let ok = 0;
    let other = 0;
    let errors = 0;
    const result = await pacedLoad(
      { url: `http://127.0.0.1:${port}`, hosts: ['a', 'b', 'busy'], connections: 2, seed: 7, rate: 500, maxS: 60 },
      {
        onResponse: (status) => {
          if (status === 200) ok++;
          else other++;
          if (ok + other === 60) stop();
        },
        onError: () => errors++,
        until,
      },
    );
    assert.equal(result.requests, ok + other);
    assert.ok(result.requests >= 60);
    assert.equal(result.non2xx, other);
    assert.deepEqual(result.statusCounts, { ...(ok ? { '200': ok } : {}), ...(other ? { '503': other } : {}) });
    assert.ok(other > 0 && ok > other, 'a third of the hosts answer 503');
    assert.equal(result.errors, 0);
    assert.equal(errors, 0, 'requests cut short by the stop are not errors');
    assert.equal(result.latency.count, result.requests);
  } finally {
    server.close();
    server.closeAllConnections();
  }
});
