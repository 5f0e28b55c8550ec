/**
 * Hostname rules end to end in this process: ext_proc answers with the policy model itself (a policy per test), the
 * actors are node's TLS client over the tunnel, raw bytes, and curl; the destinations are an HTTPS server (any
 * certificate), an HTTP server and an echo server on loopback. A CONNECT only hostname rules may allow is answered 200,
 * then decided by the SNI or Host the actor sends: allowed, the bytes reach the destination untouched; refused, the
 * actor's side is closed (HTTP/1.1: the connection; HTTP/2: RST_STREAM) and the destination is never dialled.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { readFile, writeFile } from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import tls, { type TLSSocket } from 'node:tls';
import type { Duplex } from 'node:stream';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { FirstBytesReader } from '../../lib/egress/first-bytes.js';
import { decideOnTraffic, type HostnameDecision } from '../../lib/egress/hostname-decision.js';
import { waitFor } from '../../lib/testing/wait.js';
import { decideEgress, parseEgressPolicy, parseIpAuthority } from '../../lib/egress/policy.js';
import { clientHello, clientHelloMessage, inRecords, nodeClientHello } from '../../lib/egress/testing/client-hello.js';
import type { ProcessingResponse } from '../stages/ext-proc/messages.js';
import type { SeenMessage } from '../testing/helpers.js';
import { cachedDecider, DecisionTallies } from './egress-decider.js';
import { h1Connect, h2Connect, h2Session, readBytes, startEcho, type Destination } from './testing/egress-clients.js';
import { egressPki, type ClientCredentials, type EgressPki } from './testing/egress-pki.js';
import { allowAnswer, hostnamesAnswer, outcomeAnswer, startEgressRig, type EgressRig, type EgressRigOptions } from '../testing/egress/egress-rig.js';
import { EgressVerdictCache } from './verdict-cache.js';

const run = promisify(execFile);

interface Site {
  readonly port: number;
  readonly address: string;
  /** Connections accepted so far. */
  accepted: number;
  /** What each request saw: the SNI (HTTPS) and the Host. */
  readonly seen: { readonly sni: unknown; readonly host: string | undefined }[];
  close(): Promise<void>;
}

async function startSite(kind: 'https' | 'http', bundle?: string): Promise<Site> {
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const sni = (req.socket as TLSSocket).servername;
    site.seen.push({ sni, host: req.headers.host });
    res.end(`sni=${String(sni)} host=${String(req.headers.host)}`);
  };
  const server = kind === 'https' ? https.createServer({ cert: bundle, key: bundle }, handler) : http.createServer(handler);
  server.on(kind === 'https' ? 'secureConnection' : 'connection', () => site.accepted++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const site: Site = {
    port,
    address: `127.0.0.1:${port}`,
    accepted: 0,
    seen: [],
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
  server.on('tlsClientError', () => undefined);
  return site;
}

describe('egress hostname rules through the listener', () => {
  let pki: EgressPki;
  let actor: ClientCredentials;
  let secure: Site;
  let plain: Site;
  let echo: Destination;
  let actorFile: string;
  let listenerCaFile: string;

  before(async () => {
    pki = await egressPki();
    actor = await pki.actor('team', 'a');
    const bundle = await readFile(pki.server.certFile, 'utf8');
    secure = await startSite('https', bundle);
    plain = await startSite('http');
    echo = await startEcho();
    actorFile = path.join(pki.dir, 'hostnames-actor.pem');
    await writeFile(actorFile, actor.cert);
    listenerCaFile = path.join(pki.dir, 'hostnames-listener-ca.pem');
    await writeFile(listenerCaFile, pki.serverCa);
  });
  after(async () => {
    await secure.close();
    await plain.close();
    await echo.close();
    await pki.close();
  });

  /** ext_proc as extproc answers, from the policy model: allowed, decided on the traffic (the rules), or denied. */
  function policyScript(rules: unknown[]): (m: SeenMessage) => ProcessingResponse {
    const policy = parseEgressPolicy({ rules });
    return (m) => {
      const verdict = decideEgress(policy, parseIpAuthority(m.headers[':authority'] ?? '')!);
      if (verdict.kind === 'allow') return allowAnswer(verdict.rule);
      if (verdict.kind === 'hostnames') return hostnamesAnswer(verdict.rules);
      return outcomeAnswer('denied');
    };
  }

  async function withRig(rules: unknown[], fn: (rig: EgressRig) => Promise<void>, opts: Omit<EgressRigOptions, 'script'> = {}): Promise<void> {
    const rig = await startEgressRig({ ...opts, script: policyScript(rules) });
    try {
      await fn(rig);
    } finally {
      await rig.close();
    }
  }

  const lastLine = (rig: EgressRig): Record<string, unknown> => rig.lines.at(-1) ?? {};

  /** Resolves when `stream` has closed (a refusal). */
  const closed = (stream: Duplex): Promise<void> => (stream.destroyed ? Promise.resolve() : new Promise((resolve) => stream.once('close', () => resolve())));

  /** Every byte `stream` receives, as it arrives. */
  function received(stream: Duplex): Buffer[] {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    return chunks;
  }

  /** TLS with `servername` over `tunnel`, then one HTTP request; the answer's body, or `closed` when the tunnel was closed. */
  async function tlsThrough(tunnel: Duplex, servername: string): Promise<string> {
    const socket = tls.connect({ socket: tunnel, servername, rejectUnauthorized: false, ALPNProtocols: ['http/1.1'] });
    socket.on('error', () => undefined);
    const ready = await Promise.race([once(socket, 'secureConnect').then(() => true, () => false), closed(socket).then(() => false)]);
    if (!ready) return 'closed';
    socket.end(`GET / HTTP/1.1\r\nHost: ${servername}\r\nConnection: close\r\n\r\n`);
    const answer = await readBytes(socket, Number.MAX_SAFE_INTEGER);
    return answer.slice(answer.indexOf('\r\n\r\n') + 4);
  }

  const REFUSED_DETAIL = (reason: string) => new RegExp(`^${reason}`);

  test('SNI allowed (exact, case-folded, one-label wildcard): the ClientHello reaches the destination untouched; denied: closed, the destination never dialled', async () => {
    await withRig([{ kind: 'hostnames', hostnames: ['api.example.com', '*.svc.test'], ports: [secure.port] }], async (rig) => {
      for (const name of ['api.example.com', 'API.Example.COM', 'a.svc.test']) {
        const answer = await h1Connect(rig.target, actor, secure.address);
        assert.equal(answer.status, 200);
        assert.equal(await tlsThrough(answer.socket, name), `sni=${name} host=${name}`, name);
        await waitFor(() => rig.listener.tunnels.size === 0, 5000, 'the tunnel to close');
        assert.equal(lastLine(rig).outcome, 'allowed');
        assert.equal(lastLine(rig).hostname, name);
      }
      const dialled = secure.accepted;
      for (const [name, reason] of [['evil.test', 'no_match'], ['b.a.svc.test', 'no_match'], ['svc.test', 'no_match']] as const) {
        const answer = await h1Connect(rig.target, actor, secure.address);
        assert.equal(answer.status, 200, 'answered before the traffic decides');
        assert.equal(await tlsThrough(answer.socket, name), 'closed', name);
        const line = lastLine(rig);
        assert.deepEqual([line.outcome, line.status, line.hostname], ['hostname_refused', 200, name]);
        assert.match(String(line.detail), REFUSED_DETAIL(reason));
      }
      assert.equal(secure.accepted, dialled, 'a refused tunnel never dials its destination');
      const stats = rig.listener.stats.snapshot();
      assert.deepEqual(stats.hostnames, { allowed: { sni: 3, host: 0 }, refused: { no_sni: 0, no_match: 3, unknown_protocol: 0, malformed: 0, timeout: 0, too_large: 0 } });
      assert.equal(stats.connects.allowed, 3);
      assert.equal(stats.connects.hostname_refused, 3);
      assert.equal(rig.extproc.seen.length, 6, 'no cache here: each CONNECT asked');
    });
  });

  test('curl through the listener: https:// with the allowed SNI gets its answer; another name fails; cleartext http:// decided by its Host', async () => {
    await withRig(
      [
        { kind: 'hostnames', hostnames: ['api.example.com'], ports: [secure.port] },
        { kind: 'hostnames', hostnames: ['web.test'], ports: [plain.port] },
      ],
      async (rig) => {
        const curl = (url: string, to: Site) => {
          const host = new URL(url).hostname;
          return run('curl', ['-sS', '-p', '-x', `https://127.0.0.1:${rig.target.port}`, '--proxy-cacert', listenerCaFile, '--proxy-cert', actorFile, '--proxy-key', actorFile, '--connect-to', `${host}:80:${to.address}`, '--connect-to', `${host}:443:${to.address}`, '-k', '-m', '10', url]).then(
            (r) => ({ code: 0, out: r.stdout }),
            (err: { code: number; stdout: string }) => ({ code: err.code, out: err.stdout }),
          );
        };
        assert.deepEqual(await curl('https://api.example.com/', secure), { code: 0, out: 'sni=api.example.com host=api.example.com' });
        await waitFor(() => rig.listener.tunnels.size === 0, 5000, 'the tunnel to close');
        const refused = await curl('https://other.example.com/', secure);
        assert.notEqual(refused.code, 0);
        assert.deepEqual([lastLine(rig).outcome, lastLine(rig).hostname], ['hostname_refused', 'other.example.com']);
        assert.deepEqual(await curl('http://web.test/', plain), { code: 0, out: 'sni=undefined host=web.test' });
        await waitFor(() => rig.listener.tunnels.size === 0, 5000, 'the tunnel to close');
        assert.equal(lastLine(rig).hostname, 'web.test');
        const other = await curl('http://other.test/', plain);
        assert.notEqual(other.code, 0);
        assert.deepEqual(plain.seen.map((s) => s.host), ['web.test'], 'the refused request never reached the server');
        assert.deepEqual(rig.listener.stats.snapshot().hostnames.allowed, { sni: 1, host: 1 });
      },
    );
  });

  test('a ClientHello without SNI, bytes that are neither TLS nor HTTP, a malformed ClientHello: closed, each counted by its reason', async () => {
    await withRig([{ kind: 'hostnames', hostnames: ['*'], ports: 'all' }], async (rig) => {
      const dialled = echo.accepted.length;
      const noSni = await h1Connect(rig.target, actor, secure.address);
      assert.equal(await tlsThrough(noSni.socket, ''), 'closed');
      assert.match(String(lastLine(rig).detail), /^no_sni/);
      for (const bytes of [Buffer.from('SSH-2.0-OpenSSH_9.6\r\n'), clientHello(null, { serverNames: [{ type: 0, name: 'a.test' }, { type: 0, name: 'b.test' }] })]) {
        const answer = await h1Connect(rig.target, actor, echo.address);
        answer.socket.write(bytes);
        await closed(answer.socket);
      }
      assert.equal(echo.accepted.length, dialled);
      const refused = rig.listener.stats.snapshot().hostnames.refused;
      assert.deepEqual([refused.no_sni, refused.unknown_protocol, refused.malformed], [1, 1, 1]);
      assert.match(String(lastLine(rig).detail), /^malformed: tls: two host_names/);
    });
  });

  test("node's ClientHello split across many small writes: decided once whole, then forwarded byte for byte", async () => {
    const hello = await nodeClientHello({ servername: 'split.example.com' });
    await withRig([{ kind: 'hostnames', hostnames: ['split.example.com'], ports: 'all' }], async (rig) => {
      const dialled = echo.accepted.length;
      const answer = await h1Connect(rig.target, actor, echo.address);
      const echoed = received(answer.socket);
      for (let i = 0; i < hello.length; i += 7) {
        if (i + 7 >= hello.length) {
          assert.equal(echo.accepted.length, dialled, 'nothing dialled before the ClientHello is whole');
        }
        answer.socket.write(hello.subarray(i, i + 7));
        await new Promise((resolve) => setImmediate(resolve));
      }
      answer.socket.write('after');
      await waitFor(() => Buffer.concat(echoed).length >= hello.length + 5, 5000, 'the echo');
      assert.deepEqual(Buffer.concat(echoed), Buffer.concat([hello, Buffer.from('after')]));
      assert.equal(echo.accepted.length, dialled + 1);
      answer.socket.destroy();
      await waitFor(() => rig.listener.tunnels.size === 0, 5000, 'the tunnel to close');
      assert.equal((lastLine(rig).tunnel as { fromActor: number }).fromActor, hello.length + 5, 'every byte read before the decision went through');
    });
  });

  test('the bytes read before the decision reach the destination exactly as sent (a ClientHello in 1-byte records, early data behind it)', async () => {
    const bytes = Buffer.concat([inRecords(clientHelloMessage({ sni: 'records.example.com' }), [1]), Buffer.from([23, 3, 3, 0, 2, 0xaa, 0xbb])]);
    await withRig([{ kind: 'hostnames', hostnames: ['records.example.com'], ports: 'all' }], async (rig) => {
      const answer = await h1Connect(rig.target, actor, echo.address);
      const echoed = received(answer.socket);
      for (let i = 0; i < bytes.length; i += 3) answer.socket.write(bytes.subarray(i, i + 3));
      await waitFor(() => Buffer.concat(echoed).length >= bytes.length, 5000, 'the echo');
      assert.deepEqual(Buffer.concat(echoed), bytes);
      answer.socket.destroy();
    });
  });

  test('limits: a ClientHello larger than --egress-sni-max-bytes, and an actor that sends nothing (closed at --egress-sni-timeout-ms)', async () => {
    const big = clientHello('big.example.com', { after: [{ type: 21, data: new Uint8Array(2000) }] });
    await withRig(
      [{ kind: 'hostnames', hostnames: ['big.example.com'], ports: 'all' }],
      async (rig) => {
        const dialled = echo.accepted.length;
        const large = await h1Connect(rig.target, actor, echo.address);
        large.socket.write(big);
        await closed(large.socket);
        assert.match(String(lastLine(rig).detail), /^too_large/);
        const silent = await h1Connect(rig.target, actor, echo.address);
        await closed(silent.socket);
        assert.match(String(lastLine(rig).detail), /^timeout/);
        assert.equal(echo.accepted.length, dialled);
        assert.deepEqual(rig.listener.stats.snapshot().hostnames.refused, { no_sni: 0, no_match: 0, unknown_protocol: 0, malformed: 0, timeout: 1, too_large: 1 });
        assert.equal(rig.listener.tunnels.held('team/a'), 0, 'the places are given back');
      },
      { config: { sniMaxBytes: 1024, sniTimeoutMs: 150 } },
    );
  });

  test('a hostname rule limited to a port; one before a cidrs rule that matches changes nothing: allowed at once, before any byte', async () => {
    const banner = net.createServer((s) => s.end('220 ready\r\n'));
    banner.listen(0, '127.0.0.1');
    await once(banner, 'listening');
    const bannerPort = (banner.address() as AddressInfo).port;
    try {
      await withRig(
        [
          { kind: 'hostnames', hostnames: ['*'], ports: [secure.port] },
          { kind: 'hostnames', hostnames: ['mail.test'], ports: [bannerPort] },
          { kind: 'cidrs', cidrs: ['127.0.0.0/8'], ports: [bannerPort] },
        ],
        async (rig) => {
          const elsewhere = await h1Connect(rig.target, actor, plain.address);
          assert.deepEqual([elsewhere.status, elsewhere.body], [403, 'egress denied'], 'the * rule is on another port');
          const onPort = await h1Connect(rig.target, actor, secure.address);
          assert.equal(await tlsThrough(onPort.socket, 'anything.test'), 'sni=anything.test host=anything.test');
          const serverFirst = await h1Connect(rig.target, actor, `127.0.0.1:${bannerPort}`);
          assert.equal(serverFirst.status, 200);
          assert.equal(await readBytes(serverFirst.socket, 11), '220 ready\r\n', 'the destination speaks first: no wait for the actor');
        },
      );
    } finally {
      banner.close();
    }
  });

  test('a cache hit decides hostnames without ext_proc: the cached entry carries the rules', async () => {
    const cache = new EgressVerdictCache({ maxEntries: 100, ttlMs: 60_000 });
    await withRig(
      [{ kind: 'hostnames', hostnames: ['api.example.com'], ports: [secure.port] }],
      async (rig) => {
        const first = await h1Connect(rig.target, actor, secure.address);
        assert.equal(await tlsThrough(first.socket, 'api.example.com'), 'sni=api.example.com host=api.example.com');
        await waitFor(() => rig.listener.tunnels.size === 0, 5000, 'the tunnel to close');
        assert.equal(lastLine(rig).cache, 'miss');
        const [entry] = cache.entries();
        assert.deepEqual(entry?.entry.verdict, { kind: 'hostnames', actorId: 'uid-1', atespace: 'team', name: 'a', rules: [{ rule: 0, hostnames: ['api.example.com'] }] });
        const refused = await h1Connect(rig.target, actor, secure.address);
        assert.equal(await tlsThrough(refused.socket, 'evil.test'), 'closed');
        assert.deepEqual([lastLine(rig).cache, lastLine(rig).outcome], ['hit', 'hostname_refused']);
        const again = await h1Connect(rig.target, actor, secure.address);
        assert.equal(await tlsThrough(again.socket, 'API.example.com'), 'sni=API.example.com host=API.example.com');
        await waitFor(() => rig.listener.tunnels.size === 0, 5000, 'the tunnel to close');
        assert.deepEqual([lastLine(rig).cache, lastLine(rig).outcome], ['hit', 'allowed']);
        assert.equal(rig.extproc.seen.length, 1, 'one ext_proc stream for three CONNECTs');
      },
      { decider: cachedDecider(cache, new DecisionTallies()) },
    );
  });

  test('HTTP/2: an allowed stream tunnels; a refused one is reset (RST_STREAM CONNECT_ERROR) and the connection carries on', async () => {
    await withRig([{ kind: 'hostnames', hostnames: ['api.example.com'], ports: [secure.port] }], async (rig) => {
      const session = await h2Session(rig.target, actor);
      try {
        const refused = await h2Connect(session, secure.address);
        assert.equal(refused.status, 200);
        refused.stream.write(clientHello('evil.test'));
        await closed(refused.stream);
        assert.equal(refused.stream.rstCode, http2.constants.NGHTTP2_CONNECT_ERROR);
        const viaTls = await h2Connect(session, secure.address);
        assert.equal(await tlsThrough(viaTls.stream, 'evil.test'), 'closed');
        const allowed = await h2Connect(session, secure.address);
        assert.equal(await tlsThrough(allowed.stream, 'api.example.com'), 'sni=api.example.com host=api.example.com');
        assert.equal(rig.listener.stats.snapshot().hostnames.refused.no_match, 2);
        assert.ok(!session.destroyed);
      } finally {
        session.destroy();
      }
    });
  });

  test('fuzz through the listener: generated first bytes in generated writes, then the actor ends; the tunnel opens exactly when the readers allow, with the bytes untouched', async () => {
    const rules = [{ rule: 0, hostnames: ['a.example.com', '*.svc.test'] }];
    const name = fc.constantFrom('a.example.com', 'A.EXAMPLE.com', 'x.svc.test', 'y.x.svc.test', 'b.example.com', 'svc.test');
    const hello = fc.tuple(name, fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 4 })).map(([n, sizes]) => inRecords(clientHelloMessage({ sni: n }), sizes));
    const head = name.map((n) => Buffer.from(`GET / HTTP/1.1\r\nHost: ${n}:80\r\nAccept: */*\r\n\r\n`));
    const mutated = (base: fc.Arbitrary<Buffer>) =>
      fc.tuple(base, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 2 }), fc.option(fc.nat(), { freq: 4 })).map(([b, flips, cut]) => {
        const out = Buffer.from(b);
        for (const [at, v] of flips) out[at % out.length] = v;
        return cut === null ? out : out.subarray(0, cut % (out.length + 1));
      });
    const bytes = fc.oneof(hello, head, mutated(hello), mutated(head), fc.uint8Array({ minLength: 1, maxLength: 120 }).map((b) => Buffer.from(b)));
    await withRig(
      [{ kind: 'hostnames', hostnames: rules[0]!.hostnames, ports: 'all' }],
      async (rig) => {
        await fc.assert(
          fc.asyncProperty(bytes, fc.array(fc.nat(), { maxLength: 6 }), fc.constantFrom<'h1' | 'h2'>('h1', 'h2'), async (sent, cuts, via) => {
            const reader = new FirstBytesReader(1024);
            reader.push(sent);
            const answer = reader.answer;
            const expected: HostnameDecision | undefined = answer.kind === 'need-more' ? (sent.length === 0 ? undefined : { kind: 'refuse', reason: 'malformed' }) : decideOnTraffic(answer, rules);
            const dialled = echo.accepted.length;
            const refusedBefore = rig.listener.stats.snapshot().hostnames.refused;
            const session = via === 'h2' ? await h2Session(rig.target, actor) : undefined;
            try {
              const tunnel: Duplex = session === undefined ? (await h1Connect(rig.target, actor, echo.address)).socket : (await h2Connect(session, echo.address)).stream;
              const echoed = received(tunnel);
              const at = [...new Set(cuts.map((c) => c % (sent.length + 1)))].sort((x, y) => x - y);
              let from = 0;
              for (const to of [...at, sent.length]) {
                tunnel.write(sent.subarray(from, to));
                from = to;
                await new Promise((resolve) => setImmediate(resolve));
              }
              tunnel.end();
              await closed(tunnel);
              if (expected?.kind === 'allow') {
                assert.deepEqual(Buffer.concat(echoed), sent, 'allowed: the destination got every byte, untouched');
                assert.equal(echo.accepted.length, dialled + 1);
              } else {
                assert.equal(echo.accepted.length, dialled, 'refused: never dialled');
                const refused = rig.listener.stats.snapshot().hostnames.refused;
                if (expected !== undefined) assert.equal(refused[expected.reason], refusedBefore[expected.reason] + 1, expected.reason);
              }
            } finally {
              session?.destroy();
            }
          }),
          { seed: 4471, numRuns: 100 },
        );
        assert.ok(Object.values(rig.internalErrors).every((n) => n === 0), JSON.stringify(rig.internalErrors));
      },
      { config: { sniMaxBytes: 1024 } },
    );
  });
});
