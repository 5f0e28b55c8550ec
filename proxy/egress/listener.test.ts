/**
 * The egress listener end to end in this process: real TLS with actor certificates, a scripted ext_proc server,
 * destinations on loopback. What each CONNECT is answered (and whether ext_proc was asked), bytes both ways through
 * tunnels over HTTP/1.1 and HTTP/2, the limits (idle timeout, tunnels per actor), a destination that refuses, an
 * ext_proc that is down or slow, and an actor that resets mid-tunnel.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { replaceFile } from '../../lib/tls/testing/pki.js';
import { waitFor } from '../../lib/testing/wait.js';
import { OUTBOUND_DIRECTION } from '../../lib/egress/wire.js';
import type { ClientCredentials } from './testing/egress-pki.js';
import { egressPki, type EgressPki } from './testing/egress-pki.js';
import { h1Connect, h1Request, h2Connect, h2Session, h2Stream, readBytes, refusingPort, startEcho, tlsConnect, resetConnection, type Destination } from './testing/egress-clients.js';
import { allowAnswer, outcomeAnswer, startEgressRig, type EgressRig } from '../testing/egress/egress-rig.js';
import { EgressVerdictCache } from './verdict-cache.js';
import { cachedDecider, DecisionTallies } from './egress-decider.js';

let pki: EgressPki;
let actor: ClientCredentials;
let echo: Destination;

describe('listener', () => {
  before(async () => {
    pki = await egressPki();
    actor = await pki.actor('team', 'a');
    echo = await startEcho();
  });
  after(async () => {
    await echo.close();
    await pki.close();
  });

  /** The CONNECT messages ext_proc received. */
  const asked = (rig: EgressRig): number => rig.extproc.seen.length;

  const lastLine = (rig: EgressRig): Record<string, unknown> => rig.lines.at(-1) ?? {};

  /** Resolves once `socket` is closed, at once when it already is. */
  const whenClosed = (socket: { readonly closed: boolean } & NodeJS.EventEmitter): Promise<unknown> => (socket.closed ? Promise.resolve() : once(socket, 'close'));

  test('HTTP/1.1: an allowed CONNECT opens a tunnel: bytes flow both ways, half-close passes through, one ext_proc stream with the wire contract', async () => {
    const rig = await startEgressRig();
    try {
      const answer = await h1Connect(rig.target, actor, echo.address);
      assert.equal(answer.status, 200);
      const socket = answer.socket;
      socket.write('ping');
      assert.equal(await readBytes(socket, 4), 'ping');
      // The actor's FIN reaches the destination (which echoes it back): the tunnel ends both ways, cleanly.
      const ended = once(socket, 'end');
      socket.end('bye');
      assert.equal(await readBytes(socket, 3), 'bye');
      await ended;
      await waitFor(() => rig.listener.tunnels.size === 0, 5000, 'the tunnel to close');

      assert.equal(asked(rig), 1);
      const msg = rig.extproc.seen[0]!;
      assert.equal(msg.kind, 'request_headers');
      assert.deepEqual(msg.headers, { ':method': 'CONNECT', ':authority': echo.address, host: echo.address });
      assert.equal(msg.endOfStream, true);
      const attrs = (msg.raw.attributes as Record<string, { fields: Record<string, { stringValue?: string; numberValue?: number }> }>)['envoy.filters.http.ext_proc']!.fields;
      assert.equal(attrs['source.certificate']?.stringValue?.trim(), actor.cert.slice(0, actor.cert.indexOf('-----END CERTIFICATE-----') + 25).trim());
      assert.equal(attrs['xds.listener_direction']?.numberValue, OUTBOUND_DIRECTION);
      await waitFor(() => rig.extproc.closedByClient >= 1, 5000, 'the ext_proc stream half-closed');

      const line = lastLine(rig);
      assert.equal(line.msg, 'egress');
      assert.equal(line.actor, 'team/a');
      assert.equal(line.destination, echo.address);
      assert.equal(line.outcome, 'allowed');
      assert.equal(line.cache, 'off');
      assert.equal(line.status, 200);
      const tunnel = line.tunnel as { fromActor: number; toActor: number; closedBy: string };
      assert.deepEqual({ fromActor: tunnel.fromActor, toActor: tunnel.toActor, closedBy: tunnel.closedBy }, { fromActor: 7, toActor: 7, closedBy: 'actor' });
      const stats = rig.listener.stats.snapshot();
      assert.equal(stats.connects.allowed, 1);
      assert.equal(stats.opened, 1);
      assert.equal(stats.open, 0);
      assert.deepEqual(stats.bytes, { fromActor: 7, toActor: 7 });
    } finally {
      await rig.close();
    }
  });

  test('a denied CONNECT is answered 403 egress denied; the processor\'s not-running body reaches the actor; unknown details are 503', async () => {
    const rig = await startEgressRig({
      script: (m) => {
        const dest = m.headers[':authority'] ?? '';
        if (dest.endsWith(':1')) return outcomeAnswer('denied');
        if (dest.endsWith(':2')) return outcomeAnswer('not_running', 'actor is STATUS_SUSPENDED, not running');
        return { immediate_response: { status: { code: 403 }, details: 'something_else' } };
      },
    });
    try {
      const denied = await h1Connect(rig.target, actor, '127.0.0.1:1');
      assert.deepEqual([denied.status, denied.body], [403, 'egress denied']);
      assert.equal(lastLine(rig).outcome, 'denied');
      const suspended = await h1Connect(rig.target, actor, '127.0.0.1:2');
      assert.deepEqual([suspended.status, suspended.body], [403, 'actor is STATUS_SUSPENDED, not running']);
      assert.equal(lastLine(rig).outcome, 'not_running');
      const odd = await h1Connect(rig.target, actor, '127.0.0.1:3');
      assert.deepEqual([odd.status, odd.body], [503, 'control plane unavailable']);
      assert.equal(lastLine(rig).outcome, 'unavailable');
      assert.equal(asked(rig), 3);
    } finally {
      await rig.close();
    }
  });

  test('a certificate from another CA, one without a URI SAN, an expired one, or none: 403 invalid actor certificate, ext_proc never asked', async () => {
    const rig = await startEgressRig();
    try {
      const expired = await pki.actor('team', 'old', { days: -1 });
      for (const [creds, reason] of [
        [pki.otherCa, 'untrusted'],
        [pki.noUri, 'no-uri-san'],
        [expired, 'expired'],
        [undefined, 'no-certificate'],
      ] as const) {
        const answer = await h1Connect(rig.target, creds, echo.address);
        assert.deepEqual([answer.status, answer.body], [403, 'invalid actor certificate'], reason);
        assert.equal(lastLine(rig).outcome, 'invalid_certificate');
        assert.match(String(lastLine(rig).detail), new RegExp(`^${reason}`));
      }
      const h2 = await h2Session(rig.target, pki.otherCa);
      const overH2 = await h2Connect(h2, echo.address);
      assert.deepEqual([overH2.status, overH2.body], [403, 'invalid actor certificate']);
      h2.close();
      assert.equal(asked(rig), 0);
      const stats = rig.listener.stats.snapshot();
      assert.equal(stats.refusals.certificate, 5);
      assert.deepEqual([stats.certificateRefusals.untrusted, stats.certificateRefusals['no-uri-san'], stats.certificateRefusals.expired, stats.certificateRefusals['no-certificate']], [2, 1, 1, 1]);
    } finally {
      await rig.close();
    }
  });

  test('an authority that is not IP:port, or is 10 KB long: 403 egress denied, ext_proc never asked', async () => {
    const rig = await startEgressRig();
    try {
      const huge = `${'1'.repeat(10 * 1024)}:80`;
      for (const authority of ['example.com:443', '127.0.0.1', '127.0.0.1:0', '[::1]', huge]) {
        const answer = await h1Connect(rig.target, actor, authority);
        assert.deepEqual([answer.status, answer.body], [403, 'egress denied'], authority.slice(0, 40));
        assert.equal(lastLine(rig).outcome, 'not_ip_authority');
      }
      assert.ok(String(lastLine(rig).destination).length < 200, 'the access log carries a bounded authority');
      const session = await h2Session(rig.target, actor);
      const overH2 = await h2Connect(session, huge);
      assert.deepEqual([overH2.status, overH2.body], [403, 'egress denied']);
      session.close();
      assert.equal(asked(rig), 0);
    } finally {
      await rig.close();
    }
  });

  test('any other method: 405 with Allow: CONNECT, over HTTP/1.1 (with or without an expectation) and HTTP/2', async () => {
    const rig = await startEgressRig();
    try {
      const get = await h1Request(rig.target, actor, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      assert.equal(get.status, 405);
      assert.match(get.head, /\r\nallow: CONNECT\r\n/i);
      const post = await h1Request(rig.target, actor, 'POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n\r\nabc');
      assert.equal(post.status, 405);
      // An expectation changes nothing: no 100 Continue inviting a body that is never read, no 417 of node's own.
      const expectsContinue = await h1Request(rig.target, actor, 'PUT /x HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n');
      assert.deepEqual([expectsContinue.status, expectsContinue.body], [405, 'method not allowed']);
      const expectsOther = await h1Request(rig.target, actor, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: foo\r\n\r\n');
      assert.equal(expectsOther.status, 405);
      const session = await h2Session(rig.target, actor);
      const h2get = await h2Stream(session, { ':method': 'GET', ':path': '/', ':authority': '127.0.0.1:1' }, { endStream: true });
      assert.equal(h2get.status, 405);
      session.close();
      assert.equal(asked(rig), 0);
      assert.equal(rig.listener.stats.snapshot().connects.method_not_allowed, 5);
    } finally {
      await rig.close();
    }
  });

  test('a head no parser reads gets its 400 over TLS, then the close; a refusal followed by such bytes keeps its answer', async () => {
    const rig = await startEgressRig();
    try {
      for (const bytes of ['NOT A REQUEST\r\n\r\n', 'CONNECT 127.0.0.1:1 HTTP/1.1\r\nBad Field\r\n\r\n', `CONNECT ${echo.address} HTTP/1.1\r\nContent-Length: x\r\n\r\n`]) {
        const answer = await h1Request(rig.target, actor, bytes);
        assert.equal(answer.status, 400, JSON.stringify(bytes));
        answer.socket.destroy();
      }
      // A 405 written at once, then bytes that are no request: the 405 is the one answer.
      const refused = await h1Request(rig.target, actor, 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n\x01\x02\r\n\r\n');
      assert.equal(refused.status, 405);
      refused.socket.destroy();
      assert.equal(asked(rig), 0);
    } finally {
      await rig.close();
    }
  });

  test('HTTP/2: several CONNECT streams on one connection, each its own tunnel, one denied among them', async () => {
    const second = await startEcho();
    const rig = await startEgressRig({ script: (m) => (m.headers[':authority'] === '127.0.0.1:9' ? outcomeAnswer('denied') : allowAnswer()) });
    try {
      const session = await h2Session(rig.target, actor);
      const [a, b, denied] = await Promise.all([h2Connect(session, echo.address), h2Connect(session, second.address), h2Connect(session, '127.0.0.1:9')]);
      assert.deepEqual([a.status, b.status, denied.status, denied.body], [200, 200, 403, 'egress denied']);
      a.stream.write('to-a');
      b.stream.write('to-b!');
      assert.equal(await readBytes(a.stream, 4), 'to-a');
      assert.equal(await readBytes(b.stream, 5), 'to-b!');
      assert.equal(rig.listener.tunnels.size, 2);
      a.stream.end();
      await once(a.stream, 'close');
      await waitFor(() => rig.listener.tunnels.size === 1, 5000, 'the first tunnel to close alone');
      b.stream.write('more');
      assert.equal(await readBytes(b.stream, 4), 'more');
      b.stream.end();
      await once(b.stream, 'close');
      await waitFor(() => rig.listener.tunnels.size === 0, 5000, 'the second tunnel to close');
      session.close();
      const lines = rig.lines.filter((l) => l.outcome === 'allowed');
      assert.equal(lines.length, 2);
      for (const l of lines) assert.equal(l.protocol, 'h2');
      assert.equal(asked(rig), 3);
    } finally {
      await rig.close();
      await second.close();
    }
  });

  test('ext_proc down, or not answering within --egress-extproc-timeout-ms: 503 control plane unavailable', async () => {
    const down = await startEgressRig({ extprocAddress: await refusingPort(), config: { extprocTimeoutMs: 1000 } });
    try {
      const answer = await h1Connect(down.target, actor, echo.address);
      assert.deepEqual([answer.status, answer.body], [503, 'control plane unavailable']);
      assert.equal(lastLine(down).outcome, 'unavailable');
    } finally {
      await down.close();
    }
    const slow = await startEgressRig({ script: () => 'ignore', config: { extprocTimeoutMs: 100 } });
    try {
      const answer = await h1Connect(slow.target, actor, echo.address);
      assert.deepEqual([answer.status, answer.body], [503, 'control plane unavailable']);
      await waitFor(() => slow.extproc.closedByClient >= 1, 5000, 'the unanswered stream to be cancelled');
    } finally {
      await slow.close();
    }
  });

  test('an actor that goes away while ext_proc decides cancels the stream', async () => {
    const rig = await startEgressRig({ script: () => 'ignore' });
    try {
      const socket = await tlsConnect(rig.target, actor);
      socket.write(`CONNECT ${echo.address} HTTP/1.1\r\n\r\n`);
      await waitFor(() => rig.extproc.seen.length === 1, 5000, 'the CONNECT at ext_proc');
      socket.destroy();
      await waitFor(() => rig.extproc.closedByClient >= 1, 5000, 'the stream cancelled');
      await waitFor(() => lastLine(rig).outcome === 'cancelled', 5000, 'the CONNECT logged as cancelled');
      assert.equal(rig.listener.tunnels.held('team/a'), 0, 'its place is given back');
      await waitFor(() => rig.listener.stats.snapshot().connections === 0, 5000, 'its connection closed on the proxy\'s side too');
    } finally {
      await rig.close();
    }
  });

  test('the idle timeout closes a tunnel that carries nothing', async () => {
    const rig = await startEgressRig({ config: { tunnelIdleTimeoutMs: 100 } });
    try {
      const answer = await h1Connect(rig.target, actor, echo.address);
      assert.equal(answer.status, 200, `the CONNECT was answered ${answer.status} ${answer.body}`);
      answer.socket.on('error', () => undefined);
      answer.socket.resume();
      await whenClosed(answer.socket);
      await waitFor(() => rig.lines.length === 1, 5000, 'the line');
      assert.equal((lastLine(rig).tunnel as { closedBy: string }).closedBy, 'idle');
      assert.equal(rig.listener.stats.snapshot().closed.idle, 1);
    } finally {
      await rig.close();
    }
  });

  test('the lifetime limit closes a busy tunnel', async () => {
    const rig = await startEgressRig({ config: { tunnelMaxLifetimeMs: 500 } });
    try {
      const answer = await h1Connect(rig.target, actor, echo.address);
      // Any other answer has closed its connection already (waiting for its close would wait for ever).
      assert.equal(answer.status, 200, `the CONNECT was answered ${answer.status} ${answer.body}`);
      answer.socket.on('error', () => undefined);
      answer.socket.resume();
      const timer = setInterval(() => answer.socket.write('x'), 20);
      await whenClosed(answer.socket);
      clearInterval(timer);
      await waitFor(() => rig.lines.length === 1, 5000, 'the line');
      assert.equal((lastLine(rig).tunnel as { closedBy: string }).closedBy, 'lifetime');
    } finally {
      await rig.close();
    }
  });

  test('tunnels per actor are bounded: one more CONNECT is 429, another actor is not affected, a closed tunnel frees its place', async () => {
    const rig = await startEgressRig({ config: { maxTunnelsPerActor: 2 } });
    try {
      const session = await h2Session(rig.target, actor);
      const open = await Promise.all([h2Connect(session, echo.address), h2Connect(session, echo.address)]);
      assert.deepEqual(open.map((o) => o.status), [200, 200]);
      const third = await h1Connect(rig.target, actor, echo.address);
      assert.deepEqual([third.status, third.body], [429, 'too many tunnels for this actor']);
      assert.equal(asked(rig), 2, 'the refused CONNECT never reached ext_proc');
      const other = await h1Connect(rig.target, await pki.actor('team', 'b'), echo.address);
      assert.equal(other.status, 200);
      other.socket.destroy();
      open[0]!.stream.close();
      await waitFor(() => rig.listener.tunnels.held('team/a') === 1, 5000, 'the place given back');
      const again = await h2Connect(session, echo.address);
      assert.equal(again.status, 200);
      session.destroy();
      assert.equal(rig.listener.stats.snapshot().refusals.too_many_tunnels, 1);
      await waitFor(() => rig.listener.tunnels.actors === 0, 5000, 'every place given back');
    } finally {
      await rig.close();
    }
  });

  test('a destination that refuses the connection: 502 destination unreachable (HTTP/1.1 and HTTP/2)', async () => {
    const rig = await startEgressRig();
    try {
      const closed = await refusingPort();
      const answer = await h1Connect(rig.target, actor, closed);
      assert.deepEqual([answer.status, answer.body], [502, 'destination unreachable']);
      assert.equal(lastLine(rig).outcome, 'unreachable');
      assert.equal(lastLine(rig).detail, 'ECONNREFUSED');
      const session = await h2Session(rig.target, actor);
      const overH2 = await h2Connect(session, closed);
      assert.deepEqual([overH2.status, overH2.body], [502, 'destination unreachable']);
      session.close();
      assert.equal(rig.listener.stats.snapshot().refusals.unreachable, 2);
      assert.equal(rig.listener.tunnels.actors, 0);
      assert.equal(rig.listener.grants.size, 0, 'an allowed CONNECT that opened nothing holds no grant');
    } finally {
      await rig.close();
    }
  });

  test('an actor that resets mid-tunnel: the destination connection is closed, nothing is left, the listener serves on', async () => {
    const rig = await startEgressRig();
    try {
      const before = echo.accepted.length;
      const answer = await h1Connect(rig.target, actor, echo.address);
      answer.socket.write('half');
      assert.equal(await readBytes(answer.socket, 4), 'half');
      const upstream = echo.accepted[before]!;
      const upstreamClosed = once(upstream, 'close');
      resetConnection(answer.socket);
      await upstreamClosed;
      await waitFor(() => rig.listener.tunnels.size === 0, 5000, 'the tunnel to close');
      assert.equal((lastLine(rig).tunnel as { closedBy: string }).closedBy, 'actor');

      const session = await h2Session(rig.target, actor);
      const streamed = await h2Connect(session, echo.address);
      streamed.stream.write('h2');
      assert.equal(await readBytes(streamed.stream, 2), 'h2');
      session.destroy(); // the whole connection goes, mid-tunnel
      await waitFor(() => rig.listener.tunnels.size === 0, 5000, 'the h2 tunnel to close');

      const after = await h1Connect(rig.target, actor, echo.address);
      assert.equal(after.status, 200);
      after.socket.destroy();
      assert.deepEqual(Object.entries(rig.internalErrors).filter(([, n]) => n > 0), [], 'no contained error');
    } finally {
      await rig.close();
    }
  });

  test('drain: new CONNECTs are refused, open tunnels flow until the drain timeout, then are closed', async () => {
    const rig = await startEgressRig();
    try {
      const session = await h2Session(rig.target, actor);
      const open = await h2Connect(session, echo.address);
      const draining = rig.listener.drain(200);
      open.stream.write('still');
      assert.equal(await readBytes(open.stream, 5), 'still');
      assert.equal(await draining, false);
      await waitFor(() => rig.listener.tunnels.size === 0, 5000, 'the tunnel closed at the end of the drain');
      assert.equal((lastLine(rig).tunnel as { closedBy: string }).closedBy, 'drain');
    } finally {
      await rig.close();
    }
  });

  test('the serving certificate is reloaded when its file changes; actor certificates are still verified after it', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'egress-serving-'));
    const bundle = path.join(dir, 'server.pem');
    await replaceFile(pki.server.certFile, bundle);
    const rig = await startEgressRig({ serverBundle: bundle });
    try {
      const before = await h1Connect(rig.target, actor, echo.address);
      assert.equal(before.status, 200);
      const firstSerial = before.socket.getPeerCertificate().serialNumber;
      before.socket.destroy();
      await replaceFile(await pki.rotatedServer(), bundle);
      await waitFor(() => rig.listener.listener.certificate.reloads === 1, 5000, 'the reload');
      const after = await h1Connect(rig.target, actor, echo.address);
      assert.equal(after.status, 200, 'the actor certificate verified against the actor identity CA after the reload');
      assert.notEqual(after.socket.getPeerCertificate().serialNumber, firstSerial);
      after.socket.destroy();
      const untrusted = await h1Connect(rig.target, pki.otherCa, echo.address);
      assert.deepEqual([untrusted.status, untrusted.body], [403, 'invalid actor certificate']);
    } finally {
      await rig.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('the decider answers first: a cached verdict skips ext_proc; its key is the certificate digest and the normalised destination', async () => {
    const keys: { certDigest: string; destination: string; actor: { atespace: string; name: string }; notAfterMs: number }[] = [];
    const rig = await startEgressRig({
      decider: {
        ttlMs: 5000,
        async decide(key, notAfterMs) {
          keys.push({ ...key, notAfterMs });
          return { verdict: { kind: 'deny', status: 403, body: 'egress denied', outcome: 'denied' }, cache: 'hit' };
        },
        revalidate: () => Promise.reject(new Error('no tunnel to re-validate')),
      },
    });
    try {
      const answer = await h1Connect(rig.target, actor, '127.0.0.1:0080');
      assert.deepEqual([answer.status, answer.body], [403, 'egress denied']);
      assert.equal(asked(rig), 0);
      assert.equal(lastLine(rig).cache, 'hit');
      const leaf = new X509Certificate(actor.cert);
      assert.deepEqual(keys, [{ certDigest: createHash('sha256').update(leaf.raw).digest('hex'), destination: '127.0.0.1:80', actor: { atespace: 'team', name: 'a' }, notAfterMs: Date.parse(leaf.validTo) }]);
    } finally {
      await rig.close();
    }
  });

  test('an error inside the proxy ends that CONNECT alone: 500, counted at egress-connect, its place given back, the listener serves on', async () => {
    let fail = true;
    const rig = await startEgressRig({
      decider: {
        ttlMs: 5000,
        async decide(_key, _notAfter, slowPath) {
          if (fail) throw new Error('a decider that throws');
          return { verdict: (await slowPath()).verdict, cache: 'off' };
        },
        async revalidate(_key, _notAfter, slowPath) {
          return { verdict: (await slowPath()).verdict, cache: 'off' };
        },
      },
    });
    try {
      const answer = await h1Connect(rig.target, actor, echo.address);
      assert.deepEqual([answer.status, answer.body], [500, 'internal error']);
      assert.equal(rig.internalErrors['egress-connect'], 1);
      assert.equal(lastLine(rig).outcome, 'internal');
      assert.equal(rig.listener.tunnels.actors, 0);
      fail = false;
      const next = await h1Connect(rig.target, actor, echo.address);
      assert.equal(next.status, 200);
      next.socket.destroy();
    } finally {
      await rig.close();
    }
  });

  test('HTTP/2: a client that leaves while its streams wait for their answers leaves no connection behind', async () => {
    const rig = await startEgressRig({ script: () => 'ignore', config: { extprocTimeoutMs: 60_000 } });
    try {
      const session = await h2Session(rig.target, actor);
      const waiting = session.request({ ':method': 'CONNECT', ':authority': echo.address }, { endStream: false });
      waiting.on('error', () => undefined);
      waiting.end('early');
      await waitFor(() => rig.extproc.seen.length === 1, 5000, 'the CONNECT at ext_proc');
      session.destroy();
      await waitFor(() => rig.listener.stats.snapshot().connections === 0, 5000, 'the connection closed on the proxy\'s side');
      await waitFor(() => lastLine(rig).outcome === 'cancelled', 5000, 'the CONNECT cancelled');
    } finally {
      await rig.close();
    }
  });

  test('with the verdict cache: a CONNECT that joined another\'s ext_proc stream is not refused when that other actor leaves', async () => {
    const cache = new EgressVerdictCache({ maxEntries: 100, ttlMs: 5000 });
    let first = true;
    const rig = await startEgressRig({
      decider: cachedDecider(cache, new DecisionTallies()),
      script: () => {
        if (!first) return allowAnswer();
        first = false;
        return 'ignore'; // the first stream waits until its actor leaves
      },
    });
    try {
      const leaving = await tlsConnect(rig.target, actor);
      leaving.write(`CONNECT ${echo.address} HTTP/1.1\r\n\r\n`);
      await waitFor(() => rig.extproc.seen.length === 1, 5000, 'the first CONNECT at ext_proc');
      const staying = h1Connect(rig.target, actor, echo.address); // the same key: it joins the first stream
      await waitFor(() => cache.stats().joined === 1, 5000, 'the second CONNECT joined');
      leaving.destroy();
      const answer = await staying;
      assert.equal(answer.status, 200);
      answer.socket.destroy();
      assert.equal(rig.extproc.seen.length, 2, 'the one that stayed asked ext_proc itself');
    } finally {
      await rig.close();
    }
  });
});
