/**
 * End to end, `--workers 2` (node:cluster: processes): what one worker learns about a grant closes the tunnels it
 * granted in the other. The verdict TTL is a minute, so nothing here waits for a re-validation: every close comes from
 * the shared table. A policy denial one worker learned (a CONNECT's miss after an eviction) is adopted by the other,
 * which closes its tunnels of that key; a revoke through the primary closes every worker's tunnels of the actor.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TLSSocket } from 'node:tls';
import { waitFor } from '../../lib/testing/wait.js';
import { h1Connect, startEcho, type Destination } from '../egress/testing/egress-clients.js';
import { ATESPACE, startEgressStack, type ActorCertificate, type EgressProxy, type EgressStack } from '../testing/egress/egress-stack.js';

const TTL_MS = 60_000;

let stack: EgressStack;
let proxy: EgressProxy;
let echo: Destination;

before(async () => {
  stack = await startEgressStack();
  proxy = await stack.startProxy({ ttlMs: TTL_MS, process: true, args: ['--workers', '2'] });
  echo = await startEcho();
});

after(async () => {
  await stack?.stop();
  await echo?.close();
});

interface Summed {
  egressTunnels: { open: number; closed: Record<string, number>; grants: { held: number } };
}
const summed = async (): Promise<Summed['egressTunnels']> => (await proxy.admin<Summed>('GET', '/stats')).body.egressTunnels;

/** Tunnels of `cert` on fresh connections until both workers hold one (the summed grants count one per worker). */
async function tunnelsInBothWorkers(cert: ActorCertificate): Promise<{ socket: TLSSocket; closed: boolean }[]> {
  const tunnels: { socket: TLSSocket; closed: boolean }[] = [];
  for (let i = 0; i < 40 && (tunnels.length < 4 || (await summed()).grants.held < 2); i++) {
    const answer = await h1Connect(proxy.target, cert, echo.address);
    assert.equal(answer.status, 200, answer.body);
    const tunnel = { socket: answer.socket, closed: false };
    answer.socket.once('close', () => (tunnel.closed = true));
    tunnels.push(tunnel);
  }
  assert.equal((await summed()).grants.held, 2, 'both workers hold a grant of the key');
  return tunnels;
}

test('--workers 2: a policy denial one worker learned closes the tunnels of that key in both (revoked-denied), long before any re-validation', async () => {
  const name = 'actor-000';
  await stack.setPolicy(name, { rules: [{ kind: 'all', ports: 'all' }] });
  const cert = await stack.certificate(name);
  await proxy.admin('POST', '/stats/reset', {});
  const tunnels = await tunnelsInBothWorkers(cert);
  try {
    // Evicted in both: new CONNECTs ask again; the open tunnels are not judged by an eviction.
    const evicted = await proxy.admin<{ workers: { status: number }[] }>('DELETE', `/cache/egress?actor=${ATESPACE}/${name}`);
    assert.deepEqual(evicted.body.workers.map((w) => w.status), [200, 200]);
    await stack.setPolicy(name, { rules: [] });
    const denied = await h1Connect(proxy.target, cert, echo.address); // one worker asks, and stores the denial
    assert.deepEqual([denied.status, denied.body], [403, 'egress denied']);
    await waitFor(() => tunnels.every((t) => t.closed), 10_000, 'every tunnel of the key closed, in both workers');
    const after = await summed();
    assert.equal(after.closed['revoked-denied'], tunnels.length);
    assert.deepEqual([after.open, after.grants.held], [0, 0]);
  } finally {
    for (const t of tunnels) t.socket.destroy();
  }
});

test('--workers 2: a revoke through the primary closes the actor\'s tunnels in both workers (revoked-admin), each answering for itself', async () => {
  const name = 'actor-001';
  await stack.setPolicy(name, { rules: [{ kind: 'all', ports: 'all' }] });
  const cert = await stack.certificate(name);
  await proxy.admin('POST', '/stats/reset', {});
  const tunnels = await tunnelsInBothWorkers(cert);
  try {
    const revoked = await proxy.admin<{ workers: { status: number; body: { tunnelsClosed: number } }[] }>('POST', `/egress/revoke?actor=${ATESPACE}/${name}`);
    assert.equal(revoked.status, 200);
    assert.deepEqual(revoked.body.workers.map((w) => w.status), [200, 200]);
    // Each worker answers what it closed itself; the other's revoke message may have closed its tunnels first.
    const closedByAnswers = revoked.body.workers.reduce((n, w) => n + w.body.tunnelsClosed, 0);
    assert.ok(closedByAnswers >= 1 && closedByAnswers <= tunnels.length, String(closedByAnswers));
    await waitFor(() => tunnels.every((t) => t.closed), 10_000, 'every tunnel of the actor closed');
    assert.equal((await summed()).closed['revoked-admin'], tunnels.length);
  } finally {
    for (const t of tunnels) t.socket.destroy();
  }
});
