/**
 * Tunnels allowed by a hostname rule hold a grant too, end to end: apiserver-stub (actors, policies, certificates),
 * extproc's egress mode and the proxy's egress listener with a short verdict TTL, all in this process. A CONNECT that
 * only hostname rules may allow is decided on the `Host` of the actor's first request; its tunnel then joins its
 * key's grant with that hostname, and each re-validation checks the hostname again against the fresh verdict: a rule
 * that no longer matches closes the tunnel (`revoked-denied`), one that still matches (or a plain allow) keeps it.
 * Suspending the actor and an operator's revoke close such tunnels as they close the others, and a revoke reaches a
 * CONNECT whose first bytes are still being read: it opens nothing.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { TLSSocket } from 'node:tls';
import { waitFor } from '../../lib/testing/wait.js';
import { h1Connect, readBytes, startEcho, type Destination } from '../egress/testing/egress-clients.js';
import type { ClientCredentials } from '../egress/testing/egress-pki.js';
import { adminCall as call, startEgressStack, type EgressProxy, type EgressStack } from '../testing/egress/egress-stack.js';
import type { StatsDocument } from '../admin/stats-document.js';

const TTL_MS = 600;
/** How long a test waits for what must happen within one TTL plus one round trip (a generous bound: not measured). */
const WITHIN = 10_000;

let stack: EgressStack;
let egress: EgressProxy;
let echo: Destination;

/** A policy whose one rule allows `hostnames` on every port. */
const hostnamePolicy = (...hostnames: string[]): unknown => ({ rules: [{ kind: 'hostnames', hostnames, ports: 'all' }] });

interface OpenTunnel {
  readonly socket: TLSSocket;
  closed: boolean;
}

/** A CONNECT to the echo destination decided on its first request's `Host`; the tunnel, once the request came back. */
async function openFor(creds: ClientCredentials, host: string): Promise<OpenTunnel> {
  const answer = await h1Connect(egress.target, creds, echo.address);
  assert.equal(answer.status, 200, answer.body);
  const request = `GET / HTTP/1.1\r\nHost: ${host}\r\n\r\n`;
  answer.socket.write(request);
  assert.equal(await readBytes(answer.socket, request.length), request, `the tunnel for ${host} carries its first request`);
  const tunnel: OpenTunnel = { socket: answer.socket, closed: false };
  answer.socket.once('close', () => (tunnel.closed = true));
  return tunnel;
}

async function carries(tunnel: OpenTunnel): Promise<boolean> {
  tunnel.socket.write('ping');
  return (await readBytes(tunnel.socket, 4)) === 'ping';
}

type ProxyStats = StatsDocument & { egressTunnels: NonNullable<StatsDocument['egressTunnels']> };
const proxyStats = async (): Promise<ProxyStats> => (await call<ProxyStats>(egress.handle.admin, 'GET', '/stats')).body;
const renewals = async (): Promise<number> => (await proxyStats()).egressTunnels.grants.revalidations.renewed;

/** The access-log lines of `actor`'s tunnels that have closed: who closed them, and the hostname each was allowed for. */
const tunnelLines = (actor: string): { closedBy: string; hostname: unknown }[] =>
  egress.handle
    .logs()
    .filter((l) => l.msg === 'egress' && l.actor === `demo/${actor}` && l.tunnel !== null && l.tunnel !== undefined)
    .map((l) => ({ closedBy: (l.tunnel as { closedBy: string }).closedBy, hostname: l.hostname }));

describe('grants of tunnels allowed by a hostname rule', () => {
  before(async () => {
    stack = await startEgressStack({ actors: 4 });
    egress = await stack.startProxy({ ttlMs: TTL_MS });
    echo = await startEcho();
  });

  after(async () => {
    await stack?.stop();
    await echo?.close();
  });

  test("the policy's hostname rule removed: the tunnel it allowed closes within the lag (revoked-denied), a tunnel of the same key whose hostname is still allowed stays open", async (t) => {
    await stack.setPolicy('actor-000', hostnamePolicy('api.example.test', 'www.example.test'));
    const creds = await stack.certificate('actor-000');
    const api = await openFor(creds, 'api.example.test');
    const www = await openFor(creds, 'www.example.test');
    try {
      assert.equal((await proxyStats()).egressTunnels.grants.held, 1, 'both tunnels hold the one grant of their key');
      const closedBefore = (await proxyStats()).egressTunnels.closed['revoked-denied'] ?? 0;
      await stack.setPolicy('actor-000', hostnamePolicy('www.example.test'));
      const changedAt = Date.now();
      await waitFor(() => api.closed, WITHIN, 'the tunnel whose hostname rule was removed closed');
      const lagMs = Date.now() - changedAt;
      t.diagnostic(`closed ${lagMs} ms after the policy changed (TTL ${TTL_MS} ms)`);
      await waitFor(() => tunnelLines('actor-000').length === 1, WITHIN, 'its access-log line');
      assert.deepEqual(tunnelLines('actor-000'), [{ closedBy: 'revoked-denied', hostname: 'api.example.test' }], `closed ${lagMs} ms after the change`);
      assert.equal(((await proxyStats()).egressTunnels.closed['revoked-denied'] ?? 0) - closedBefore, 1);

      const renewed = await renewals();
      await waitFor(async () => (await renewals()) >= renewed + 2, WITHIN, 'two more re-validations of the grant');
      assert.equal(www.closed, false, 'the tunnel whose hostname is still allowed stays open');
      assert.ok(await carries(www));
      assert.equal((await proxyStats()).egressTunnels.grants.held, 1);
    } finally {
      api.socket.destroy();
      www.socket.destroy();
    }
  });

  test('the policy changed to rules that still allow the tunnel (a wildcard, then a plain allow of the address): it stays open across re-validations', async () => {
    await stack.setPolicy('actor-001', hostnamePolicy('api.example.test'));
    const creds = await stack.certificate('actor-001');
    const tunnel = await openFor(creds, 'api.example.test');
    try {
      for (const policy of [hostnamePolicy('*.example.test'), { rules: [{ kind: 'cidrs', cidrs: ['127.0.0.0/8'], ports: 'all' }] }]) {
        await stack.setPolicy('actor-001', policy);
        const renewed = await renewals();
        // Two renewals after the change: the second was asked after the change, whatever the first read.
        await waitFor(async () => (await renewals()) >= renewed + 2, WITHIN, 'two re-validations after the change');
        assert.equal(tunnel.closed, false, `still open under ${JSON.stringify(policy)}`);
        assert.ok(await carries(tunnel));
      }
      await stack.setPolicy('actor-001', hostnamePolicy('other.example.test'));
      await waitFor(() => tunnel.closed, WITHIN, 'closed once no rule allows its hostname');
      await waitFor(() => tunnelLines('actor-001').length === 1, WITHIN, 'its access-log line');
      assert.deepEqual(tunnelLines('actor-001'), [{ closedBy: 'revoked-denied', hostname: 'api.example.test' }]);
    } finally {
      tunnel.socket.destroy();
    }
  });

  test('an actor suspended, and an operator revoke: tunnels allowed by a hostname rule close as the others do', async () => {
    await stack.setPolicy('actor-002', hostnamePolicy('api.example.test'));
    await stack.setPolicy('actor-003', hostnamePolicy('api.example.test'));
    const suspended = await openFor(await stack.certificate('actor-002'), 'api.example.test');
    const revoked = await openFor(await stack.certificate('actor-003'), 'api.example.test');
    try {
      assert.equal((await stack.stubAdmin('POST', '/actors/demo/actor-002/suspend')).status, 200);
      await waitFor(() => suspended.closed, WITHIN, "the suspended actor's tunnel closed");
      await waitFor(() => tunnelLines('actor-002').length === 1, WITHIN, 'its access-log line');
      assert.deepEqual(tunnelLines('actor-002'), [{ closedBy: 'revoked-not-running', hostname: 'api.example.test' }]);
      assert.equal(revoked.closed, false);

      const answer = await call(egress.handle.admin, 'POST', '/egress/revoke?actor=demo/actor-003');
      assert.equal(answer.status, 200);
      assert.equal(answer.body.tunnelsClosed, 1);
      await waitFor(() => revoked.closed, WITHIN, 'the revoked tunnel closed');
      await waitFor(() => tunnelLines('actor-003').length === 1, WITHIN, 'its access-log line');
      assert.deepEqual(tunnelLines('actor-003'), [{ closedBy: 'revoked-admin', hostname: 'api.example.test' }]);
    } finally {
      suspended.socket.destroy();
      revoked.socket.destroy();
    }
  });

  test('a revoke while a CONNECT decided on its traffic is still being read: its name, sent afterwards, opens nothing', async () => {
    await stack.setPolicy('actor-003', hostnamePolicy('api.example.test'));
    const creds = await stack.certificate('actor-003');
    const answer = await h1Connect(egress.target, creds, echo.address);
    try {
      assert.equal(answer.status, 200, answer.body);
      const dialled = echo.accepted.length;
      assert.equal((await call(egress.handle.admin, 'POST', '/egress/revoke?actor=demo/actor-003')).status, 200);
      answer.socket.write('GET / HTTP/1.1\r\nHost: api.example.test\r\n\r\n');
      assert.equal(await readBytes(answer.socket, 1), '', 'closed without a byte from the destination');
      assert.equal(echo.accepted.length, dialled, 'nothing dialled');
      const line = egress.handle.logs().filter((l) => l.msg === 'egress' && l.actor === 'demo/actor-003').at(-1);
      assert.deepEqual([line?.outcome, line?.hostname, line?.detail], ['denied', 'api.example.test', 'grant ended before the tunnel opened: revoked-admin']);
    } finally {
      answer.socket.destroy();
    }
  });
});
