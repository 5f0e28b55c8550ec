/**
 * The egress path end to end, every component in this process from the flags its process takes: apiserver-stub
 * (actors, their egress policies, and their certificates from the actor identity CA), extproc's egress mode, and the
 * proxy's egress listener with its verdict cache. An actor's CONNECT is denied by default, opens a tunnel once its
 * policy names the destination (within the cache's TTL), is denied for a port outside it, is answered from the cache
 * without a control-plane read while the verdict lives, and is refused once the actor is suspended.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { eventually } from '../../lib/testing/wait.js';
import { workerNet } from '../../lib/loopback.js';
import { actorCaFiles, createActorCa } from '../../lib/tls/actor-certs.js';
import type { InProcessComponent } from '../../lib/testing/component.js';
import { startStubInProcess } from '../../apiserver-stub/testing/in-process.js';
import { startExtprocInProcess } from '../../extproc/testing/in-process.js';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { h1Connect, readBytes, startEcho, type Destination, type EgressTarget } from '../egress/testing/egress-clients.js';
import { egressPki, type ClientCredentials, type EgressPki } from '../egress/testing/egress-pki.js';

const TTL_MS = 1000;

let dir: string;
let pki: EgressPki;
let stub: InProcessComponent;
let extproc: InProcessComponent;
let proxy: InProcessTestProxy;
let allowed: Destination;
let other: Destination;
let target: EgressTarget;

async function stubAdmin<T = Record<string, unknown>>(method: string, route: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`http://${stub.addresses.admin}${route}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as T };
}

/** A certificate for a running actor, minted by the stub as the worker would ask for one. */
async function certificateOf(name: string): Promise<ClientCredentials> {
  assert.equal((await stubAdmin('POST', `/actors/demo/${name}/resume`)).status, 200);
  const minted = await stubAdmin<{ bundle: string }>('POST', `/actors/demo/${name}/certificate`);
  assert.equal(minted.status, 200, JSON.stringify(minted.body));
  return { cert: minted.body.bundle, key: minted.body.bundle };
}

const getActorCalls = async (): Promise<number> => {
  const rpc = (await stubAdmin<{ rpc: Record<string, Record<string, number>> }>('GET', '/stats')).body.rpc;
  return Object.values(rpc.GetActor ?? {}).reduce((a, b) => a + b, 0);
};

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-egress-e2e-'));
  await createActorCa(dir);
  pki = await egressPki();
  const net = await workerNet();
  stub = await startStubInProcess([
    '--actor-ca-dir', dir, '--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--workers', '4', '--worker-ip-base', net.ipBase,
    '--worker-port', String(net.port), '--actors', '4', '--atespace', 'demo', '--cold-resume-ms', '5', '--resolve-latency-ms', '0',
  ]);
  extproc = await startExtprocInProcess(['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--apiserver', stub.addresses.grpc!, '--worker-port', String(net.port)]);
  allowed = await startEcho();
  other = await startEcho();
  proxy = await startTestProxy({
    mode: 'in-process',
    extproc: extproc.addresses.grpc!,
    args: [
      '--egress-listen', '127.0.0.1:0',
      '--egress-tls-cert', pki.server.certFile,
      '--egress-tls-key', pki.server.keyFile,
      '--egress-client-ca', actorCaFiles(dir).certFile,
      '--egress-cache-ttl-ms', String(TTL_MS),
    ],
  });
  const address = proxy.addresses.egress as string;
  target = { host: '127.0.0.1', port: Number(address.slice(address.lastIndexOf(':') + 1)), ca: pki.serverCa };
});

after(async () => {
  await proxy?.stop();
  await extproc?.stop();
  await stub?.stop();
  await allowed?.close();
  await other?.close();
  await pki?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

const portOf = (d: Destination): number => Number(d.address.slice(d.address.lastIndexOf(':') + 1));

test('deny by default; a policy naming the destination opens the tunnel within the TTL; another port stays denied; a hit reads nothing from the control plane', async () => {
  const actor = await certificateOf('actor-000');
  const denied = await h1Connect(target, actor, allowed.address);
  assert.deepEqual([denied.status, denied.body], [403, 'egress denied']);

  const policy = { rules: [{ kind: 'cidrs', cidrs: ['127.0.0.1/32'], ports: [portOf(allowed)] }] };
  assert.equal((await stubAdmin('PUT', '/actors/demo/actor-000/egress-policy', policy)).status, 200);
  const open = await eventually(async () => {
    const answer = await h1Connect(target, actor, allowed.address);
    if (answer.status === 200) return answer;
    answer.socket.destroy();
    return undefined;
  }, 5000, 'the CONNECT allowed once the denial expired');
  open.socket.write('through the tunnel');
  assert.equal(await readBytes(open.socket, 18), 'through the tunnel');
  open.socket.destroy();

  const hitsBefore = await getActorCalls();
  const again = await h1Connect(target, actor, allowed.address);
  assert.equal(again.status, 200);
  again.socket.destroy();
  const line = proxy.logs().filter((l) => l.msg === 'egress' && l.status === 200).at(-1);
  // Within the TTL of the allow just stored this is a hit (a slow machine may have let it expire: then a miss).
  assert.ok(line?.cache === 'hit' || line?.cache === 'miss', String(line?.cache));
  if (line?.cache === 'hit') assert.equal(await getActorCalls(), hitsBefore, 'a hit reads nothing from the control plane');

  const otherPort = await h1Connect(target, actor, other.address);
  assert.deepEqual([otherPort.status, otherPort.body], [403, 'egress denied']);
});

test('a suspended actor is refused within the TTL (its certificate still valid)', async () => {
  const actor = await certificateOf('actor-001');
  const policy = { rules: [{ kind: 'all', ports: 'all' }] };
  assert.equal((await stubAdmin('PUT', '/actors/demo/actor-001/egress-policy', policy)).status, 200);
  const first = await h1Connect(target, actor, allowed.address);
  assert.equal(first.status, 200);
  first.socket.destroy();
  assert.equal((await stubAdmin('POST', '/actors/demo/actor-001/suspend')).status, 200);
  const refused = await eventually(async () => {
    const answer = await h1Connect(target, actor, allowed.address);
    if (answer.status === 403) return answer;
    answer.socket.destroy();
    return undefined;
  }, 5000, 'the suspended actor refused');
  assert.match(refused.body, /not running/);
});
