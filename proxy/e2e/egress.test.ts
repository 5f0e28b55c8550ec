/**
 * The egress path end to end, every component in this process from the flags its process takes: apiserver-stub
 * (actors, their egress policies, and their certificates from the actor identity CA), extproc's egress mode, and the
 * proxy's egress listener with its verdict cache. An actor's CONNECT is denied by default, opens a tunnel once its
 * policy names the destination (within the cache's TTL), is denied for a port outside it, is answered from the cache
 * without a control-plane read while the verdict lives, and is refused once the actor is suspended.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../../lib/testing/wait.js';
import { h1Connect, readBytes, startEcho, type Destination } from '../egress/testing/egress-clients.js';
import { startEgressStack, type EgressProxy, type EgressStack } from '../testing/egress/egress-stack.js';

const TTL_MS = 1000;

let stack: EgressStack;
let egress: EgressProxy;
let allowed: Destination;
let other: Destination;

describe('the egress path', () => {
  before(async () => {
    stack = await startEgressStack({ actors: 4 });
    egress = await stack.startProxy({ ttlMs: TTL_MS });
    allowed = await startEcho();
    other = await startEcho();
  });

  after(async () => {
    await stack?.stop();
    await allowed?.close();
    await other?.close();
  });

  const stubAdmin = (method: string, route: string, body?: unknown) => stack.stubAdmin(method, route, body);
  /** A certificate for a running actor, minted by the stub as the worker would ask for one. */
  const certificateOf = (name: string) => stack.certificate(name);
  const getActorCalls = async (): Promise<number> => (await stack.controlCalls()).getActor;

  const portOf = (d: Destination): number => Number(d.address.slice(d.address.lastIndexOf(':') + 1));

  test('deny by default; a policy naming the destination opens the tunnel within the TTL; another port stays denied; a hit reads nothing from the control plane', async () => {
    const actor = await certificateOf('actor-000');
    const denied = await h1Connect(egress.target, actor, allowed.address);
    assert.deepEqual([denied.status, denied.body], [403, 'egress denied']);

    const policy = { rules: [{ kind: 'cidrs', cidrs: ['127.0.0.1/32'], ports: [portOf(allowed)] }] };
    assert.equal((await stubAdmin('PUT', '/actors/demo/actor-000/egress-policy', policy)).status, 200);
    const open = await eventually(async () => {
      const answer = await h1Connect(egress.target, actor, allowed.address);
      if (answer.status === 200) return answer;
      answer.socket.destroy();
      return undefined;
    }, 5000, 'the CONNECT allowed once the denial expired');
    open.socket.write('through the tunnel');
    assert.equal(await readBytes(open.socket, 18), 'through the tunnel');
    open.socket.destroy();

    const hitsBefore = await getActorCalls();
    const again = await h1Connect(egress.target, actor, allowed.address);
    assert.equal(again.status, 200);
    again.socket.destroy();
    const line = egress.handle.logs().filter((l) => l.msg === 'egress' && l.status === 200).at(-1);
    // Within the TTL of the allow just stored this is a hit (a slow machine may have let it expire: then a miss).
    assert.ok(line?.cache === 'hit' || line?.cache === 'miss', String(line?.cache));
    if (line?.cache === 'hit') assert.equal(await getActorCalls(), hitsBefore, 'a hit reads nothing from the control plane');

    const otherPort = await h1Connect(egress.target, actor, other.address);
    assert.deepEqual([otherPort.status, otherPort.body], [403, 'egress denied']);
  });

  test('a suspended actor is refused within the TTL (its certificate still valid)', async () => {
    const actor = await certificateOf('actor-001');
    const policy = { rules: [{ kind: 'all', ports: 'all' }] };
    assert.equal((await stubAdmin('PUT', '/actors/demo/actor-001/egress-policy', policy)).status, 200);
    const first = await h1Connect(egress.target, actor, allowed.address);
    assert.equal(first.status, 200);
    first.socket.destroy();
    assert.equal((await stubAdmin('POST', '/actors/demo/actor-001/suspend')).status, 200);
    const refused = await eventually(async () => {
      const answer = await h1Connect(egress.target, actor, allowed.address);
      if (answer.status === 403) return answer;
      answer.socket.destroy();
      return undefined;
    }, 5000, 'the suspended actor refused');
    assert.match(refused.body, /not running/);
  });
});
