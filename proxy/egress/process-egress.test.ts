/**
 * The egress listener wired into the proxy process: `--egress-listen` starts it on the proxy's ext_proc channel
 * (in this process, and as `--workers 2`, where the workers share its port); its CONNECTs show in `/stats`
 * (`egressTunnels`), `/metrics` and the access log; the drain closes the tunnels still open at its end.
 * Needs processes: with `--workers 2` the proxy's workers are processes sharing the egress port.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { waitFor } from '../../lib/testing/wait.js';
import { startScriptedExtProc, type ScriptedExtProc } from '../testing/helpers.js';
import { startTestProxy } from '../testing/proxy.js';
import { h1Connect, h2Connect, h2Session, readBytes, startEcho, type Destination, type EgressTarget } from './testing/egress-clients.js';
import { egressPki, type ClientCredentials, type EgressPki } from './testing/egress-pki.js';
import { allowAnswer, hostnamesAnswer, outcomeAnswer } from '../testing/egress/egress-rig.js';

let pki: EgressPki;
let actor: ClientCredentials;
let echo: Destination;
let extproc: ScriptedExtProc;

before(async () => {
  pki = await egressPki();
  actor = await pki.actor('team', 'a');
  echo = await startEcho();
  extproc = await startScriptedExtProc((m) => (m.headers[':authority'] === echo.address ? allowAnswer() : outcomeAnswer('denied')));
});
after(async () => {
  await extproc.close();
  await echo.close();
  await pki.close();
});

const egressArgs = (): string[] => [
  '--egress-listen', '127.0.0.1:0',
  '--egress-tls-cert', pki.server.certFile,
  '--egress-tls-key', pki.server.keyFile,
  '--egress-client-ca', pki.actorCaFile,
];

function targetOf(address: string | undefined): EgressTarget {
  assert.ok(address !== undefined, 'the ready line names the egress listener');
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at), port: Number(address.slice(at + 1)), ca: pki.serverCa };
}

test('in the proxy process: tunnels through ext_proc, /stats egressTunnels, the metrics, the access log, and the drain', async () => {
  const proxy = await startTestProxy({ mode: 'in-process', extproc: extproc.address, args: [...egressArgs(), '--drain-timeout-ms', '300'] });
  try {
    const target = targetOf(proxy.addresses.egress);
    const allowed = await h1Connect(target, actor, echo.address);
    assert.equal(allowed.status, 200);
    allowed.socket.write('hello');
    assert.equal(await readBytes(allowed.socket, 5), 'hello');
    allowed.socket.end();
    const denied = await h1Connect(target, actor, '127.0.0.1:9');
    assert.deepEqual([denied.status, denied.body], [403, 'egress denied']);

    await waitFor(async () => ((await (await request(`${proxy.admin}/stats`)).body.json()) as { egressTunnels: { open: number } }).egressTunnels.open === 0, 5000, 'the tunnel closed');
    const stats = (await (await request(`${proxy.admin}/stats`)).body.json()) as { egressTunnels: { opened: number; connects: Record<string, number>; bytes: { fromActor: number } }; extproc: { streams: number } };
    assert.equal(stats.egressTunnels.opened, 1);
    assert.equal(stats.egressTunnels.connects.allowed, 1);
    assert.equal(stats.egressTunnels.connects.denied, 1);
    assert.equal(stats.egressTunnels.bytes.fromActor, 5);
    const metrics = await (await request(`${proxy.admin}/metrics`)).body.text();
    assert.match(metrics, /^actor_edge_proxy_egress_connects_total\{outcome="allowed"\} 1$/m);
    assert.match(metrics, /^actor_edge_proxy_egress_connects_total\{outcome="denied"\} 1$/m);
    assert.match(metrics, /^actor_edge_proxy_egress_tunnels_open 0$/m);
    const lines = proxy.logs().filter((l) => l.msg === 'egress');
    const summary = lines.map((l) => `${String(l.outcome)} ${String(l.status)} ${String(l.actor)}`).sort();
    assert.deepEqual(summary, ['allowed 200 team/a', 'denied 403 team/a']);

    // The drain: a tunnel still open at its end is closed, and stop() completes.
    const session = await h2Session(target, actor);
    const open = await h2Connect(session, echo.address);
    assert.equal(open.status, 200);
    const closed = new Promise((resolve) => open.stream.once('close', resolve));
    await proxy.stop();
    await closed;
    session.destroy();
    const drained = proxy.logs().filter((l) => l.msg === 'egress' && (l.tunnel as { closedBy?: string } | null)?.closedBy === 'drain');
    assert.equal(drained.length, 1);
  } finally {
    await proxy.stop();
  }
});

test('--egress-sni-timeout-ms: a tunnel decided on its traffic that sends nothing is closed at it, counted in /stats and the metrics', async () => {
  const script = extproc.script;
  extproc.script = () => hostnamesAnswer([{ rule: 0, hostnames: ['api.example.com'] }]);
  const proxy = await startTestProxy({ mode: 'in-process', extproc: extproc.address, args: [...egressArgs(), '--egress-sni-timeout-ms', '100'] });
  try {
    const answer = await h1Connect(targetOf(proxy.addresses.egress), actor, echo.address);
    assert.equal(answer.status, 200);
    await new Promise((resolve) => answer.socket.once('close', resolve));
    const stats = (await (await request(`${proxy.admin}/stats`)).body.json()) as { egressTunnels: { connects: Record<string, number>; hostnames: { refused: Record<string, number> } } };
    assert.equal(stats.egressTunnels.connects.hostname_refused, 1);
    assert.equal(stats.egressTunnels.hostnames.refused.timeout, 1);
    const metrics = await (await request(`${proxy.admin}/metrics`)).body.text();
    assert.match(metrics, /^actor_edge_proxy_egress_hostname_refusals_total\{reason="timeout"\} 1$/m);
    assert.match(metrics, /^actor_edge_proxy_egress_hostname_allowed_total\{by="sni"\} 0$/m);
    assert.match(metrics, /^actor_edge_proxy_egress_connects_total\{outcome="hostname_refused"\} 1$/m);
    const line = proxy.logs().find((l) => l.msg === 'egress');
    assert.deepEqual([line?.outcome, line?.status, line?.detail], ['hostname_refused', 200, 'timeout']);
  } finally {
    extproc.script = script;
    await proxy.stop();
  }
});

test('--workers 2: the workers share the egress port; a CONNECT is served by either', async () => {
  const proxy = await startTestProxy({ extproc: extproc.address, args: [...egressArgs(), '--workers', '2'] });
  try {
    const target = targetOf(proxy.addresses.egress);
    for (let i = 0; i < 4; i++) {
      const answer = await h1Connect(target, actor, echo.address);
      assert.equal(answer.status, 200);
      answer.socket.write(`n${i}`);
      assert.equal(await readBytes(answer.socket, 2), `n${i}`);
      answer.socket.destroy();
    }
    const stats = (await (await request(`${proxy.admin}/stats`)).body.json()) as { egressTunnels?: { opened: number } };
    assert.equal(stats.egressTunnels?.opened, 4, 'the primary sums its workers\' blocks');
  } finally {
    await proxy.stop();
  }
});
