import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { request } from 'undici';
import { boundAddress } from '../lib/address.js';
import { freePort } from '../lib/loopback.js';
import { INTERNAL_HEADERS, TARGET_PORT_HEADER } from '../lib/wire-contract.js';
import { UsageError } from '../lib/flags.js';
import { readFloorConfig, startFloor, type Floor } from './floor.js';

let upstream: http.Server;
let floor: Floor;
const seen: { method?: string; url?: string; host?: string; connection?: string; body: string }[] = [];

describe('floor', () => {
  before(async () => {
    upstream = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, host: req.headers.host, connection: req.headers['x-hop'] as string | undefined, body });
        if (req.url === '/big') {
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          res.end(Buffer.alloc(3 * 1024 * 1024, 7));
          return;
        }
        res.writeHead(req.url === '/missing' ? 404 : 200, { 'content-type': 'application/json', 'x-upstream': 'yes' });
        res.end(JSON.stringify({ method: req.method, length: body.length }));
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    floor = await startFloor({ listen: '127.0.0.1:0', admin: '127.0.0.1:0', upstream: boundAddress(upstream), routes: {}, ingressHeaders: false });
  });

  after(async () => {
    await floor.close();
    upstream.closeAllConnections();
    await new Promise((r) => upstream.close(r));
  });

  test('forwards method, path, Host and body, and streams status, headers and body back', async () => {
    const get = await request(`http://${floor.http}/a/b?c=1`, { headers: { host: 'actor-001.demo.example' } });
    assert.equal(get.statusCode, 200);
    assert.equal(get.headers['x-upstream'], 'yes');
    assert.deepEqual(await get.body.json(), { method: 'GET', length: 0 });
    assert.deepEqual(seen.at(-1), { method: 'GET', url: '/a/b?c=1', host: 'actor-001.demo.example', connection: undefined, body: '' });

    const post = await request(`http://${floor.http}/orders`, { method: 'POST', body: 'x'.repeat(5000), headers: { host: 'h' } });
    assert.equal(post.statusCode, 200);
    assert.deepEqual(await post.body.json(), { method: 'POST', length: 5000 });

    const missing = await request(`http://${floor.http}/missing`);
    assert.equal(missing.statusCode, 404);
    await missing.body.dump();

    const big = await request(`http://${floor.http}/big`);
    const buf = Buffer.from(await big.body.arrayBuffer());
    assert.equal(buf.length, 3 * 1024 * 1024);
    assert.equal(buf[buf.length - 1], 7);
  });

  test('the admin counts requests and CPU and resets them', async () => {
    await (await request(`http://${floor.admin}/stats/reset`, { method: 'POST' })).body.dump();
    for (let i = 0; i < 3; i++) await (await request(`http://${floor.http}/count`)).body.dump();
    const before = (await (await request(`http://${floor.admin}/stats`)).body.json()) as { requests: { total: number }; process: { cpuUserUs: number } };
    assert.equal(before.requests.total, 3, 'the three requests since the reset');
    assert.ok(before.process.cpuUserUs > 0, 'CPU is read (any positive amount)');
    const reset = await request(`http://${floor.admin}/stats/reset`, { method: 'POST' });
    assert.equal(reset.statusCode, 200);
    const fresh = (await reset.body.json()) as { requests: { total: number }; upstream: string; process: unknown };
    assert.equal(fresh.requests.total, 0, 'the reset answers the fresh /stats');
    assert.equal(typeof fresh.upstream, 'string');
    const metrics = await (await request(`http://${floor.admin}/metrics`)).body.text();
    const lifetime = /^actor_edge_floor_requests_total (\d+)$/m.exec(metrics);
    assert.ok(lifetime && Number(lifetime[1]) >= before.requests.total, 'Prometheus keeps the lifetime count');
    const after = (await (await request(`http://${floor.admin}/stats`)).body.json()) as { requests: { total: number } };
    assert.equal(after.requests.total, 0);
  });

  test('/ready answers LIVE while running', async () => {
    const ready = await request(`http://${floor.admin}/ready`);
    assert.equal(ready.statusCode, 200);
    assert.equal(await ready.body.text(), 'LIVE\n');
  });

  test('the admin is guarded like the components\': a rebinding Host reads nothing, /ready answers anyone', async () => {
    const stats = await request(`http://${floor.admin}/stats`, { headers: { host: 'rebind.evil.example' } });
    assert.equal(stats.statusCode, 403);
    assert.equal(((await stats.body.json()) as { code: string }).code, 'ADMIN_FOREIGN_HOST');
    const ready = await request(`http://${floor.admin}/ready`, { headers: { host: 'rebind.evil.example' } });
    await ready.body.dump();
    assert.equal(ready.statusCode, 200);
  });

  test('an upstream that refuses connections gives 502', async () => {
    const dead = await startFloor({ listen: '127.0.0.1:0', admin: '127.0.0.1:0', upstream: `127.0.0.1:${await freePort()}`, routes: {}, ingressHeaders: false });
    try {
      const res = await request(`http://${dead.http}/`);
      assert.equal(res.statusCode, 502);
      assert.match(await res.body.text(), /upstream failed/);
    } finally {
      await dead.close();
    }
  });

  test('with a Host table each request goes to its Host\'s worker; an unknown Host is answered 404 without a fallback', async () => {
    const other = http.createServer((_req, res) => res.end('other'));
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const routed = await startFloor({ listen: '127.0.0.1:0', admin: '127.0.0.1:0', upstream: undefined, routes: { 'a.demo': boundAddress(upstream), 'b.demo': boundAddress(other) }, ingressHeaders: false });
    try {
      const a = await request(`http://${routed.http}/x`, { headers: { host: 'a.demo' } });
      assert.deepEqual(await a.body.json(), { method: 'GET', length: 0 });
      const b = await request(`http://${routed.http}/x`, { headers: { host: 'b.demo' } });
      assert.equal(await b.body.text(), 'other');
      const none = await request(`http://${routed.http}/x`, { headers: { host: 'c.demo' } });
      assert.equal(none.statusCode, 404);
      await none.body.dump();
      const stats = (await (await request(`http://${routed.admin}/stats`)).body.json()) as { requests: { total: number; unrouted: number }; routes: number };
      assert.deepEqual(stats.requests, { total: 3, unrouted: 1 });
      assert.equal(stats.routes, 2);
    } finally {
      await routed.close();
      other.closeAllConnections();
      await new Promise((r) => other.close(r));
    }
  });

  test('--ingress-headers: forwarding headers and a fresh request id go upstream, the id comes back, forged and Connection-named headers do not pass', async () => {
    const heads: http.IncomingHttpHeaders[] = [];
    const worker = http.createServer((req, res) => {
      heads.push(req.headers);
      res.writeHead(200, { 'x-worker': 'w' });
      res.end('ok');
    });
    await new Promise<void>((r) => worker.listen(0, '127.0.0.1', r));
    const ingress = await startFloor({ listen: '127.0.0.1:0', admin: '127.0.0.1:0', upstream: boundAddress(worker), routes: {}, ingressHeaders: true });
    try {
      const forged = Object.fromEntries(INTERNAL_HEADERS.map((h) => [h, 'forged']));
      // node's own client, which sends a Connection header as given (undici's replaces it).
      const first = await new Promise<{ headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
        const [host, port] = ingress.http.split(':') as [string, string];
        const req = http.get(
          {
            host,
            port: Number(port),
            path: '/a',
            agent: false,
            headers: {
              ...forged,
              host: 'actor-001.demo.example',
              'x-forwarded-for': '203.0.113.9',
              'x-forwarded-proto': 'https',
              'x-forwarded-host': 'evil.example',
              'x-real-ip': '203.0.113.9',
              forwarded: 'for=203.0.113.9',
              'x-request-id': 'client-chosen',
              'x-named': 'hop',
              connection: 'close, X-Named',
              'x-kept': 'yes',
            },
          },
          (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (body += c));
            res.on('end', () => resolve({ headers: res.headers, body }));
          },
        );
        req.on('error', reject);
      });
      assert.equal(first.body, 'ok');
      const second = await request(`http://${ingress.http}/b`);
      await second.body.dump();
      const [seen1, seen2] = heads as [http.IncomingHttpHeaders, http.IncomingHttpHeaders];
      for (const h of INTERNAL_HEADERS) assert.equal(seen1[h], undefined, `${h} is not forwarded`);
      assert.equal(seen1[TARGET_PORT_HEADER], undefined);
      assert.equal(seen1['x-forwarded-for'], '203.0.113.9, 127.0.0.1', 'the peer is appended');
      assert.equal(seen1['x-forwarded-proto'], 'http', 'from the connection, not the client');
      for (const h of ['x-forwarded-host', 'x-real-ip', 'forwarded', 'x-named']) assert.equal(seen1[h], undefined, `${h} is not forwarded`);
      assert.equal(seen1['x-kept'], 'yes');
      assert.equal(seen1.host, 'actor-001.demo.example');
      assert.equal(seen2['x-forwarded-for'], '127.0.0.1');
      const id1 = seen1['x-request-id'] as string;
      assert.ok(id1 !== undefined && id1 !== 'client-chosen', 'a fresh id replaces the client\'s');
      assert.notEqual(seen2['x-request-id'], id1, 'each request its own id');
      assert.equal(first.headers['x-request-id'], id1, 'the response carries the request\'s id');
      assert.equal(second.headers['x-request-id'], seen2['x-request-id']);
      assert.equal(first.headers['x-worker'], 'w');
    } finally {
      await ingress.close();
      worker.closeAllConnections();
      await new Promise((r) => worker.close(r));
    }
  });

  test('without --ingress-headers the floor adds nothing: no request id, no forwarding headers', async () => {
    const res = await request(`http://${floor.http}/plain`, { headers: { 'x-request-id': 'client-chosen' } });
    await res.body.dump();
    assert.equal(res.headers['x-request-id'], undefined);
  });

  test('--ingress-headers is off unless asked for, by flag or FLOOR_INGRESS_HEADERS; a value that is no boolean is refused with the variable named', () => {
    const base = ['--upstream', '127.0.0.1:9'];
    assert.equal(readFloorConfig(base, {}).config?.ingressHeaders, false);
    assert.equal(readFloorConfig([...base, '--ingress-headers'], {}).config?.ingressHeaders, true);
    assert.equal(readFloorConfig(base, { FLOOR_INGRESS_HEADERS: 'on' }).config?.ingressHeaders, true);
    assert.throws(() => readFloorConfig(base, { FLOOR_INGRESS_HEADERS: 'sometimes' }), (err: unknown) => err instanceof UsageError && /FLOOR_INGRESS_HEADERS/.test(err.message) && /"sometimes"/.test(err.message));
  });
});
