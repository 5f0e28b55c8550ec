/**
 * The process-wide budgets, end to end in one process: the replay budget (`--replay-buffer-budget-bytes`) and the
 * connection limit over every client listener (`--max-connections`: plain, HTTPS and CONNECT alike).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import https from 'node:https';
import { readFile } from 'node:fs/promises';
import { request } from 'undici';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { createTestCa } from '../testing/throwaway-ca.js';
import { getJson, routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';

const KiB = 1024;
const MiB = 1024 * KiB;

let ep: ScriptedExtProc;
let up: Upstream;
/** Paths the upstream has answered stale once already. */
const staleOnce = new Set<string>();

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

describe('the process-wide budgets', () => {
  before(async () => {
    up = await startUpstream((req, res, body) => {
      const url = req.url ?? '/';
      if (url.startsWith('/stale-once') && !staleOnce.has(url)) {
        staleOnce.add(url);
        res.writeHead(421, { 'x-ate-assignment-stale': 'true' }).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ bytes: body.length, sha: sha(body) }));
    });
    ep = await startScriptedExtProc(() => routeTo(up.address));
  });

  after(async () => {
    await ep.close();
    await up.close();
  });

  interface OverloadBlock {
    readonly replay: { budgetBytes: number; inUseBytes: number; bodies: number; streamedWithoutReplay: number };
    readonly connections: { open: number; max: number; refused: { limit: number; overload: number } };
  }

  async function overloadStats(proxy: InProcessTestProxy): Promise<OverloadBlock> {
    return (await getJson(`${proxy.admin}/stats`)).overload as OverloadBlock;
  }

  async function post(proxy: InProcessTestProxy, path: string, body: Buffer, actor: string): Promise<{ status: number; text: string }> {
    const res = await request(`${proxy.ingress}${path}`, { method: 'POST', headers: { host: actorHost(actor), 'content-type': 'application/octet-stream' }, body });
    return { status: res.statusCode, text: await res.body.text() };
  }

  test('replay budget: a 1 MiB body beyond the budget is delivered whole, streamed without replay and counted; one within it is retained and replayed', async () => {
    const proxy = await startTestProxy({
      mode: 'in-process',
      extproc: ep.address,
      // The body limit stays at its 1 MiB default: only the budget (512 KiB) keeps the big body from being retained.
      args: ['--access-log', 'off', '--replay-buffer-budget-bytes', String(512 * KiB)],
    });
    try {
      const big = randomBytes(MiB);
      const delivered = await post(proxy, '/upload', big, 'big');
      assert.equal(delivered.status, 200);
      assert.deepEqual(JSON.parse(delivered.text), { bytes: MiB, sha: sha(big) }, 'the worker got every byte, in order');
      let s = await overloadStats(proxy);
      assert.equal(s.replay.budgetBytes, 512 * KiB);
      assert.equal(s.replay.streamedWithoutReplay, 1);
      await waitFor(async () => (await overloadStats(proxy)).replay.inUseBytes === 0, 5000, 'the budget to be given back');

      // Within the budget: retained, so a stale answer re-runs it with the same body.
      const small = randomBytes(100 * KiB);
      const rerun = await post(proxy, '/stale-once-small', small, 'small');
      assert.equal(rerun.status, 200);
      assert.deepEqual(JSON.parse(rerun.text), { bytes: small.length, sha: sha(small) }, 'replayed whole after the stale answer');
      // Beyond it: streamed without replay, so the same stale answer cannot re-run it (it is not delivered twice).
      const refused = await post(proxy, '/stale-once-big', big, 'big2');
      assert.equal(refused.status, 503);
      assert.equal(refused.text, 'actor assignment stale and the request body is too large to replay; not re-run\n');
      s = await overloadStats(proxy);
      assert.equal(s.replay.streamedWithoutReplay, 2, 'the small body was retained; the second big one was not');
      await waitFor(async () => {
        const r = (await overloadStats(proxy)).replay;
        return r.inUseBytes === 0 && r.bodies === 0;
      }, 5000, 'every retained byte back in the budget');
    } finally {
      await proxy.stop();
    }
  });

  /** A raw TCP connection; resolves once connected. */
  function connect(address: string): Promise<{ socket: net.Socket; closed: Promise<Buffer> }> {
    const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port });
      const data: Buffer[] = [];
      socket.on('data', (c: Buffer) => data.push(c));
      const closed = new Promise<Buffer>((done) => socket.once('close', () => done(Buffer.concat(data))));
      socket.once('error', () => undefined);
      socket.once('connect', () => resolve({ socket, closed }));
      socket.once('error', reject);
    });
  }

  /** An HTTPS GET through the proxy's TLS listener on a connection of its own. */
  function httpsGet(address: string, ca: string): Promise<{ status: number; text: string }> {
    const port = Number(address.slice(address.lastIndexOf(':') + 1));
    return new Promise((resolve, reject) => {
      const req = https.request({ host: '127.0.0.1', port, servername: 'localhost', ca, path: '/', headers: { host: actorHost('tls') }, agent: false }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  test('--max-connections 3 over the plain, HTTPS and CONNECT listeners together: a 4th connection is closed at once and counted; admin still answers', async () => {
    const ca = await createTestCa();
    const { certFile, keyFile } = await ca.issue('ingress');
    const caPem = await readFile(ca.caFile, 'utf8');
    const proxy = await startTestProxy({
      mode: 'in-process',
      extproc: ep.address,
      args: ['--access-log', 'off', '--max-connections', '3', '--connect-listen', '127.0.0.1:0', '--tls-listen', '127.0.0.1:0', '--tls-cert', certFile, '--tls-key', keyFile],
    });
    try {
      const tlsAddress = proxy.addresses.tls as string;
      const connectAddress = proxy.addresses.connect as string;
      const open = [await connect(proxy.address), await connect(tlsAddress), await connect(connectAddress)];
      await waitFor(async () => (await overloadStats(proxy)).connections.open === 3, 5000, 'three client connections counted');

      for (const address of [proxy.address, tlsAddress, connectAddress]) {
        const refused = await connect(address);
        assert.equal((await refused.closed).length, 0, `${address}: closed without a byte (no TLS handshake either)`);
      }
      await assert.rejects(httpsGet(tlsAddress, caPem), 'an HTTPS client is refused too');
      const s = await overloadStats(proxy); // the admin listener is not limited
      assert.deepEqual(s.connections, { open: 3, max: 3, refused: { limit: 4, overload: 0 } });

      // One closes: a new connection is served, over TLS as well.
      open[1]?.socket.destroy();
      await waitFor(async () => (await overloadStats(proxy)).connections.open === 2, 5000, 'the closed connection uncounted');
      assert.deepEqual(await httpsGet(tlsAddress, caPem), { status: 200, text: JSON.stringify({ bytes: 0, sha: sha(Buffer.alloc(0)) }) });
      for (const c of open) c.socket.destroy();
      await waitFor(async () => (await overloadStats(proxy)).connections.open === 0, 5000, 'every connection uncounted');
    } finally {
      await proxy.stop();
      await ca.remove();
    }
  });

  interface BodiesBlock {
    readonly bodies: { budgetBytes: number; inUseBytes: number; inFlight: number };
    readonly shed: { bodyBudget: number };
  }

  /** A POST of `length` bytes on a raw connection, of which only `first` are sent now; `rest()` sends the others. */
  async function partialPost(address: string, actor: string, length: number, first: number): Promise<{ rest: () => void; closed: Promise<Buffer> }> {
    const c = await connect(address);
    c.socket.write(`POST /upload HTTP/1.1\r\nHost: ${actorHost(actor)}\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`);
    c.socket.write(Buffer.alloc(first, 0x61));
    return { rest: () => c.socket.write(Buffer.alloc(length - first, 0x62)), closed: c.closed };
  }

  test('body budget: bodies in flight beyond --body-inflight-budget-bytes are answered 503 + Retry-After at once and counted; the share comes back when a body is in', async () => {
    const proxy = await startTestProxy({
      mode: 'in-process',
      extproc: ep.address,
      // Two large bodies' shares (256 KiB each).
      args: ['--access-log', 'off', '--body-inflight-budget-bytes', String(512 * KiB)],
    });
    const stats = async (): Promise<BodiesBlock> => (await getJson(`${proxy.admin}/stats`)).overload as BodiesBlock;
    try {
      const a = await partialPost(proxy.address, 'slow-a', MiB, 64 * KiB);
      const b = await partialPost(proxy.address, 'slow-b', MiB, 64 * KiB);
      await waitFor(async () => (await stats()).bodies.inFlight === 2, 5000, 'two bodies in flight');
      assert.deepEqual((await stats()).bodies, { budgetBytes: 512 * KiB, inUseBytes: 512 * KiB, inFlight: 2 });

      // A third large body finds no room: refused before a byte of it is read, its connection closed after.
      const res = await request(`${proxy.ingress}/upload`, { method: 'POST', headers: { host: actorHost('third') }, body: randomBytes(MiB) });
      assert.equal(res.statusCode, 503);
      assert.equal(res.headers['retry-after'], '1');
      assert.equal(res.headers.connection, 'close');
      assert.equal(await res.body.text(), 'the proxy is overloaded: retry later\n');
      // A request without a body is served as before.
      const get = await request(`${proxy.ingress}/`, { headers: { host: actorHost('reader') } });
      assert.equal(get.statusCode, 200);
      await get.body.dump();
      assert.equal((await stats()).shed.bodyBudget, 1);

      // One body arrives whole: its share comes back (before its answer) and the next upload is served.
      a.rest();
      assert.match((await a.closed).toString('latin1'), /^HTTP\/1\.1 200 /);
      await waitFor(async () => (await stats()).bodies.inFlight === 1, 5000, 'the finished body uncounted');
      const big = randomBytes(MiB);
      const served = await post(proxy, '/upload', big, 'fourth');
      assert.equal(served.status, 200);
      assert.deepEqual(JSON.parse(served.text), { bytes: MiB, sha: sha(big) });
      // A small body reserves only its length.
      const small = randomBytes(1000);
      assert.equal((await post(proxy, '/upload', small, 'small')).status, 200);

      b.rest();
      assert.match((await b.closed).toString('latin1'), /^HTTP\/1\.1 200 /);
      await waitFor(async () => {
        const s = (await stats()).bodies;
        return s.inUseBytes === 0 && s.inFlight === 0;
      }, 5000, 'every share back in the budget');
      assert.equal((await stats()).shed.bodyBudget, 1);
    } finally {
      await proxy.stop();
    }
  });
});
