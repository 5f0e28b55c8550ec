/**
 * End to end with a real gRPC client (@grpc/grpc-js over h2c) through the proxy to the stub workers' demo gRPC
 * service: gRPC stays HTTP/2 to the worker (unary, server streaming, an error status in trailers), a moved actor
 * is answered after one eviction and one re-run, and an HTTP/2 client still reaches the actor's HTTP/1.1 app.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { loadProto, lookup } from '../../lib/proto.js';
import { actorName, adminJson, client, hostOf, proxyStats, resetStats, startStack, stubActor, ATESPACE, type Stack, type Stub } from '../testing/stack.js';
import type { InProcessTestProxy } from '../testing/proxy.js';

const run = promisify(execFile);

interface EchoReply {
  actor: string;
  worker: string;
  request_id: string;
  message: string;
  index: number;
}

type Unary = (req: object, cb: (err: grpc.ServiceError | null, reply: EchoReply) => void) => void;
interface EchoClient extends grpc.Client {
  Echo: Unary;
  Fail: Unary;
  Count(req: object): grpc.ClientReadableStream<EchoReply>;
}

let stack: Stack;
let stub: Stub;
let proxy: InProcessTestProxy;
const clients: grpc.Client[] = [];

describe('gRPC through the proxy', () => {
  before(async () => {
    stack = await startStack({ stub: { workers: 4, capacity: 4, actors: 8 }, proxyArgs: ['--cache-ttl-ms', '60000'] });
    ({ stub, proxy } = stack);
  });

  after(async () => {
    await client.close(); // first: a drain waits out its idle grace for an open keep-alive connection
    for (const c of clients) c.close();
    await stack?.stop();
  });

  function echoClient(actor: string): EchoClient {
    const Ctor = lookup<grpc.ServiceClientConstructor>(loadProto('demo/echo.proto'), 'actoredge.demo.Echo');
    const c = new Ctor(proxy.address, grpc.credentials.createInsecure(), { 'grpc.default_authority': hostOf(actor) }) as unknown as EchoClient;
    clients.push(c);
    return c;
  }

  const call = (fn: Unary, c: EchoClient, req: object): Promise<EchoReply> =>
    new Promise((resolve, reject) => fn.call(c, req, (err, reply) => (err ? reject(err) : resolve(reply))));

  test('unary call: answered by the actor on its worker over h2c, with the request id the proxy gave it', async () => {
    const actor = actorName(0);
    const reply = await call(echoClient(actor).Echo, echoClient(actor), { message: 'hello' });
    assert.equal(reply.message, 'hello');
    assert.equal(reply.actor, actor);
    assert.equal(reply.worker, (await stubActor(stub, actor)).workerIp);
    assert.ok(reply.request_id.length > 0);
  });

  test('server-streaming call: every message arrives, then OK', async () => {
    const c = echoClient(actorName(1));
    const stream = c.Count({ count: 5, message: 'tick' });
    const indexes: number[] = [];
    for await (const m of stream as AsyncIterable<EchoReply>) indexes.push(m.index);
    assert.deepEqual(indexes, [0, 1, 2, 3, 4]);
  });

  test('an error status travels in trailers to the client', async () => {
    const c = echoClient(actorName(2));
    await assert.rejects(call(c.Fail, c, { code: grpc.status.PERMISSION_DENIED, message: 'not for you' }), (err: grpc.ServiceError) => {
      assert.equal(err.code, grpc.status.PERMISSION_DENIED);
      assert.equal(err.details, 'not for you');
      return true;
    });
  });

  test('a moved actor: the gRPC call is answered by its new worker after one eviction and one re-run', async () => {
    const actor = actorName(3);
    const c = echoClient(actor);
    const first = await call(c.Echo, c, { message: 'warm' });
    await adminJson(stub.admin, `/actors/${ATESPACE}/${actor}/move`, 'POST');
    await resetStats(proxy.admin);
    const again = await call(c.Echo, c, { message: 'moved' });
    assert.equal(again.message, 'moved');
    const now = await stubActor(stub, actor);
    assert.equal(again.worker, now.workerIp);
    assert.notEqual(again.worker, first.worker);
    const s = await proxyStats(proxy);
    assert.equal(s.cache.evictions.stale, 1);
    assert.deepEqual(s.reruns, { stale: 1, connect: 0, reset: 0 });
  });

  test("an HTTP/2 client reaches the actor's HTTP/1.1 app", async () => {
    const actor = actorName(4);
    const { stdout } = await run('curl', ['-sS', '--max-time', '10', '--http2-prior-knowledge', '-H', `host: ${hostOf(actor)}`, '-w', '\n%{http_version}', `${proxy.ingress}/app`]);
    const [body, version] = stdout.split('\n');
    assert.equal(version, '2');
    const app = JSON.parse(body as string) as { actor: string; path: string };
    assert.equal(app.actor, actor);
    assert.equal(app.path, '/app');
  });
});
