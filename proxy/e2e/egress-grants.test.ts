/**
 * Grants that end, end to end: apiserver-stub (actors, policies, certificates, outages), extproc's egress mode and
 * the proxy's egress listener with a short verdict TTL, all in this process. Open tunnels are re-validated ahead of
 * their lease and closed when the answer changes: a policy removed, an actor suspended, a certificate that reaches
 * its NotAfter, a control plane that cannot answer before the lease runs out, an operator's revoke. Each close is
 * counted by its reason and named in its access-log line; another actor's tunnels stay open.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TLSSocket } from 'node:tls';
import { eventually, waitFor } from '../../lib/testing/wait.js';
import { h1Connect, readBytes, startEcho, type Destination } from '../egress/testing/egress-clients.js';
import type { ClientCredentials } from '../egress/testing/egress-pki.js';
import { adminCall as call, startEgressStack, type EgressProxy, type EgressStack } from '../testing/egress/egress-stack.js';
import type { StatsDocument } from '../admin/stats-document.js';

const TTL_MS = 400;
/** How long a test waits for what must happen within one TTL plus one round trip (a generous bound: not measured). */
const WITHIN = 10_000;

let stack: EgressStack;
let egress: EgressProxy;
let echo: Destination;
let echo2: Destination;

const stubAdmin = <T = Record<string, unknown>>(method: string, route: string, body?: unknown) => stack.stubAdmin<T>(method, route, body);

/** A running actor allowed everywhere, and a certificate for it (`lifetimeMs`: its validity). */
async function allowedActor(name: string, lifetimeMs?: number): Promise<ClientCredentials> {
  await stack.setPolicy(name, { rules: [{ kind: 'all', ports: 'all' }] });
  return stack.certificate(name, lifetimeMs === undefined ? {} : { lifetimeMs });
}

/** An open tunnel, and when its actor's side saw it close. */
interface OpenTunnel {
  readonly socket: TLSSocket;
  closed: boolean;
  /** Set by the test before it changes anything: a close seen before is a close nothing asked for. */
  closedAfterChange: boolean | undefined;
}

let changing = false;

async function openTunnels(creds: ClientCredentials, n: number, to: Destination = echo): Promise<OpenTunnel[]> {
  const out: OpenTunnel[] = [];
  for (let i = 0; i < n; i++) {
    const answer = await h1Connect(egress.target, creds, to.address);
    assert.equal(answer.status, 200, answer.body);
    const tunnel: OpenTunnel = { socket: answer.socket, closed: false, closedAfterChange: undefined };
    answer.socket.once('close', () => {
      tunnel.closed = true;
      tunnel.closedAfterChange = changing;
    });
    out.push(tunnel);
  }
  return out;
}

async function carries(tunnel: OpenTunnel): Promise<boolean> {
  tunnel.socket.write('ping');
  return (await readBytes(tunnel.socket, 4)) === 'ping';
}

const closeAll = (tunnels: readonly OpenTunnel[]): void => tunnels.forEach((t) => t.socket.destroy());

type ProxyStats = StatsDocument & { egressTunnels: NonNullable<StatsDocument['egressTunnels']> };
const proxyStats = async (): Promise<ProxyStats> => (await call<ProxyStats>(egress.handle.admin, 'GET', '/stats')).body;
const extprocRequests = async (): Promise<Record<string, number>> =>
  (await call<{ egress: { requests: Record<string, number> } }>(`http://${stack.extproc.addresses.admin}`, 'GET', '/stats')).body.egress.requests;

/** The access-log lines of `actor`'s tunnels that have closed. */
const tunnelLines = (actor: string): { closedBy: string; grant: { origin: number; generation: number } | null }[] =>
  egress.handle
    .logs()
    .filter((l) => l.msg === 'egress' && l.actor === `demo/${actor}` && l.tunnel !== null && l.tunnel !== undefined)
    .map((l) => l.tunnel as { closedBy: string; grant: { origin: number; generation: number } | null });

describe('grants that end', () => {
  before(async () => {
    stack = await startEgressStack({ actors: 8 });
    egress = await stack.startProxy({ ttlMs: TTL_MS });
    echo = await startEcho();
    echo2 = await startEcho();
  });

  after(async () => {
    await stack?.stop();
    await echo?.close();
    await echo2?.close();
  });

  test('a policy removed while 20 tunnels are open: all 20 close at the first re-validation after the change (revoked-denied), none of another actor', async () => {
    changing = false;
    const revoked = await allowedActor('actor-000');
    const bystander = await allowedActor('actor-001');
    const tunnels = await openTunnels(revoked, 20);
    const others = await openTunnels(bystander, 3);
    try {
      const opened = await extprocRequests();
      const renewedAtOpen = (await proxyStats()).egressTunnels.grants.revalidations.renewed;
      // While the policy allows, the grants are renewed, one ext_proc stream per key (two keys), not one per tunnel.
      await waitFor(async () => (await proxyStats()).egressTunnels.grants.revalidations.renewed >= renewedAtOpen + 4, WITHIN, 'two renewals of each grant');
      const renewed = (await proxyStats()).egressTunnels.grants.revalidations.renewed - renewedAtOpen;
      const asked = ((await extprocRequests()).allowed ?? 0) - (opened.allowed ?? 0);
      assert.ok(asked <= renewed + 2, `${asked} ext_proc streams for ${renewed} renewals of 2 grants holding 23 tunnels`);
      assert.ok(await carries(tunnels[0] as OpenTunnel));
      assert.equal(tunnels.filter((t) => t.closed).length, 0);

      const before = await extprocRequests();
      const closedBefore = (await proxyStats()).egressTunnels.closed['revoked-denied'] ?? 0;
      changing = true;
      assert.equal((await stubAdmin('DELETE', '/actors/demo/actor-000/egress-policy')).status, 200);
      await waitFor(() => tunnels.every((t) => t.closed), WITHIN, 'the 20 tunnels closed');
      const denials = ((await extprocRequests()).denied ?? 0) - (before.denied ?? 0);

      assert.ok(tunnels.every((t) => t.closedAfterChange === true), 'no tunnel closed before the policy changed');
      assert.equal(denials, 1, 'closed by the first re-validation that read the new policy: one ext_proc answer for the 20');
      await waitFor(() => tunnelLines('actor-000').length === 20, WITHIN, 'their access-log lines');
      assert.deepEqual([...new Set(tunnelLines('actor-000').map((l) => l.closedBy))], ['revoked-denied']);
      assert.ok(tunnelLines('actor-000').every((l) => l.grant !== null && l.grant.generation > 0), 'each line names the entry that granted its tunnel');
      assert.equal(((await proxyStats()).egressTunnels.closed['revoked-denied'] ?? 0) - closedBefore, 20);

      assert.equal(others.filter((t) => t.closed).length, 0, "another actor's tunnels stay open");
      for (const t of others) assert.ok(await carries(t));
      const again = await h1Connect(egress.target, revoked, echo.address);
      assert.deepEqual([again.status, again.body], [403, 'egress denied'], 'and a new CONNECT is refused');
    } finally {
      closeAll([...tunnels, ...others]);
    }
  });

  test('an actor suspended with open tunnels: they close (revoked-not-running)', async () => {
    changing = false;
    const actor = await allowedActor('actor-002');
    const tunnels = [...(await openTunnels(actor, 2)), ...(await openTunnels(actor, 2, echo2))];
    try {
      changing = true;
      assert.equal((await stubAdmin('POST', '/actors/demo/actor-002/suspend')).status, 200);
      await waitFor(() => tunnels.every((t) => t.closed), WITHIN, 'the tunnels of the suspended actor closed');
      assert.ok(tunnels.every((t) => t.closedAfterChange === true));
      await waitFor(() => tunnelLines('actor-002').length === 4, WITHIN, 'their access-log lines');
      assert.deepEqual([...new Set(tunnelLines('actor-002').map((l) => l.closedBy))], ['revoked-not-running']);
    } finally {
      closeAll(tunnels);
    }
  });

  test("the certificate's NotAfter closes its tunnels (certificate-expired) though every re-validation allowed them", async () => {
    changing = false;
    const actor = await allowedActor('actor-003', 2500);
    const tunnels = await openTunnels(actor, 3);
    try {
      await waitFor(() => tunnels.every((t) => t.closed), WITHIN, 'the tunnels closed at the NotAfter');
      await waitFor(() => tunnelLines('actor-003').length === 3, WITHIN, 'their access-log lines');
      assert.deepEqual([...new Set(tunnelLines('actor-003').map((l) => l.closedBy))], ['certificate-expired']);
      const refused = await h1Connect(egress.target, actor, echo.address);
      assert.deepEqual([refused.status, refused.body], [403, 'invalid actor certificate'], 'the expired certificate opens nothing more');
    } finally {
      closeAll(tunnels);
    }
  });

  test('the control plane down: no re-validation can renew the grant, its tunnels close when the lease runs out (revalidation-failed); afterwards CONNECTs are allowed again', async () => {
    changing = false;
    const actor = await allowedActor('actor-004');
    const tunnels = await openTunnels(actor, 2);
    const failedBefore = (await proxyStats()).egressTunnels.grants.revalidations.failed;
    try {
      changing = true;
      assert.equal((await stubAdmin('POST', '/outage', { ms: 60_000 })).status, 200);
      await waitFor(() => tunnels.every((t) => t.closed), WITHIN, 'the tunnels closed');
      assert.ok(tunnels.every((t) => t.closedAfterChange === true));
      assert.ok((await proxyStats()).egressTunnels.grants.revalidations.failed > failedBefore, 'a re-validation failed before they closed');
      await waitFor(() => tunnelLines('actor-004').length === 2, WITHIN, 'their access-log lines');
      assert.deepEqual([...new Set(tunnelLines('actor-004').map((l) => l.closedBy))], ['revalidation-failed']);
    } finally {
      closeAll(tunnels);
      assert.equal((await stubAdmin('DELETE', '/outage')).status, 200);
    }
    const again = await h1Connect(egress.target, actor, echo.address);
    assert.equal(again.status, 200, again.body);
    again.socket.destroy();
  });

  test('revoke by admin: the actor\'s verdicts evicted and its tunnels closed at once (revoked-admin); another actor untouched; its next CONNECT asks again', async () => {
    changing = false;
    const revoked = await allowedActor('actor-005');
    const bystander = await allowedActor('actor-006');
    const tunnels = [...(await openTunnels(revoked, 2)), ...(await openTunnels(revoked, 2, echo2))];
    const others = await openTunnels(bystander, 2);
    try {
      assert.equal((await call(egress.handle.admin, 'POST', '/egress/revoke')).status, 400);
      assert.equal((await call(egress.handle.admin, 'POST', '/egress/revoke?actor=demo')).status, 400);
      changing = true;
      const answer = await call(egress.handle.admin, 'POST', '/egress/revoke?actor=demo/actor-005');
      assert.equal(answer.status, 200);
      assert.equal(answer.body.actor, 'demo/actor-005');
      assert.equal(answer.body.tunnelsClosed, 4);
      assert.equal(answer.body.evicted, 2, 'its two entries (one per destination), renewed ahead of their expiry until now');
      await waitFor(() => tunnels.every((t) => t.closed), WITHIN, 'the revoked tunnels closed');
      await waitFor(() => tunnelLines('actor-005').length === 4, WITHIN, 'their access-log lines');
      assert.deepEqual([...new Set(tunnelLines('actor-005').map((l) => l.closedBy))], ['revoked-admin']);
      assert.equal(others.filter((t) => t.closed).length, 0);
      for (const t of others) assert.ok(await carries(t));

      const next = await h1Connect(egress.target, revoked, echo.address);
      assert.equal(next.status, 200, 'not a ban: the policy still allows it');
      next.socket.destroy();
      const line = await eventually(
        () => egress.handle.logs().find((l) => l.msg === 'egress' && l.actor === 'demo/actor-005' && (l.tunnel as { closedBy?: string } | null)?.closedBy === 'actor'),
        WITHIN,
        'its line',
      );
      assert.equal(line.cache, 'miss', 'asked ext_proc again');
    } finally {
      closeAll([...tunnels, ...others]);
    }
  });
});
