#!/usr/bin/env node
/**
 * The assertions of `npm run test:compose`, run from the host against the deployment's loopback-published ports
 * (requests, stats) or inside a worker container (isolation).
 *
 *   node dist/scripts/compose/check.js requests   (hit, miss, forced move; resets counters first)
 *   node dist/scripts/compose/check.js stats      (after the load: proxy and extproc /stats agree with the flag;
 *                                                   no worker failed the proxy's identity check)
 *   node dist/scripts/compose/check.js isolation  (TCP: CHECK_UNREACHABLE host:port,... must fail to connect,
 *                                                   CHECK_REACHABLE host:port,... must connect)
 *   node dist/scripts/compose/check.js tls        (inside the proxy container: every worker in CHECK_TLS_WORKERS
 *                                                   name:port,... presents a certificate signed by CHECK_TLS_CA
 *                                                   whose only SAN is CHECK_TLS_WORKER_PREFIX<name>, and answers
 *                                                   no request from a client without a certificate;
 *                                                   CHECK_TLS_CONTROL name:port presents one valid for its name)
 *   node dist/scripts/compose/check.js h2         (inside the proxy container: one GET over HTTP/2 with TLS and one
 *                                                   gRPC call through the proxy: scripts/compose/check-h2.ts)
 *   node dist/scripts/compose/check.js extproc    (inside the proxy container: the ext_proc hop is mTLS both ways:
 *                                                   scripts/compose/check-extproc.ts)
 *   node dist/scripts/compose/check.js admin      (every published admin refuses reads with a rebinding Host)
 *   node dist/scripts/compose/check.js egress     (after test-compose.sh's CONNECTs through the egress listener, since
 *                                                   a /stats reset: two allowed, one denied by the policy, one without
 *                                                   a certificate; the proxy's egress counters and verdict cache agree
 *                                                   with PROXY_EGRESS_CACHE)
 *   node dist/scripts/compose/check.js config F   (F: `docker compose config` output; every service hardened)
 *
 * Inside the containers the checks run from the host's dist/, mounted by scripts/compose/test-overlay.yaml at
 * /app/checks (the image holds only the components).
 *
 * Environment: PROXY_ACTOR_CACHE (on|off, what the deployment was started with), CHECK_INGRESS (http://127.0.0.1:8080),
 * CHECK_PROXY_ADMIN (http://127.0.0.1:9901), CHECK_EXTPROC_ADMIN (http://127.0.0.1:9902),
 * CHECK_STUB_ADMIN (http://127.0.0.1:9903), CHECK_WORKERS (4), ACTOR_SUFFIX.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { Resolver } from 'node:dns/promises';
import { request } from 'undici';
import { DEFAULT_ACTOR_SUFFIX } from '../../lib/actor-ref.js';
import { h2Phase } from './check-h2.js';
import { extprocPhase } from './check-extproc.js';
import { hardeningProblems } from './hardening.js';
import type { StatsDocument } from '../../proxy/admin/stats-document.js';

const env = process.env;
const cacheOn = (env.PROXY_ACTOR_CACHE ?? 'on').toLowerCase() !== 'off';
const egressCacheOn = (env.PROXY_EGRESS_CACHE ?? 'on').toLowerCase() !== 'off';
const ingress = env.CHECK_INGRESS ?? 'http://127.0.0.1:8080';
const proxyAdmin = env.CHECK_PROXY_ADMIN ?? 'http://127.0.0.1:9901';
const extprocAdmin = env.CHECK_EXTPROC_ADMIN ?? 'http://127.0.0.1:9902';
const stubAdmin = env.CHECK_STUB_ADMIN ?? 'http://127.0.0.1:9903';
const workers = Number(env.CHECK_WORKERS ?? 4);
const suffix = env.ACTOR_SUFFIX || DEFAULT_ACTOR_SUFFIX;

interface Answer {
  readonly status: number;
  readonly body: string;
}

async function call(method: 'GET' | 'POST', url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await request(url, { method, headers, headersTimeout: 15000, bodyTimeout: 15000 });
  return { status: res.statusCode, body: await res.body.text() };
}

async function json<T>(method: 'GET' | 'POST', url: string): Promise<T> {
  const a = await call(method, url);
  assert.equal(a.status, 200, `${method} ${url} → ${a.status} ${a.body}`);
  return JSON.parse(a.body) as T;
}

interface DemoAnswer {
  atespace: string;
  actor: string;
  worker: string;
  seq: number;
}

async function actor(name: string): Promise<DemoAnswer> {
  const host = `${name}.demo.${suffix}`;
  const a = await call('GET', `${ingress}/check`, { host });
  assert.equal(a.status, 200, `GET ${host} through the proxy → ${a.status} ${a.body}`);
  const body = JSON.parse(a.body) as DemoAnswer;
  assert.equal(body.actor, name);
  assert.equal(body.atespace, 'demo');
  return body;
}

/** The proxy's `/stats`, as the proxy declares it. */
type ProxyStats = StatsDocument;
interface ExtprocStats {
  streams: { total: number; active: number };
  requests: Record<string, number>;
  resumeCalls: Record<string, number>;
}
interface StubStats {
  workers: Record<string, { alive: boolean }>;
  deliveries: { total: number; duplicates: number };
}

function log(text: string): void {
  process.stdout.write(`compose-check (cache ${cacheOn ? 'on' : 'off'}): ${text}\n`);
}

async function waitForWorkers(): Promise<void> {
  const deadline = Date.now() + 60000;
  for (;;) {
    const alive = Object.values((await json<StubStats>('GET', `${stubAdmin}/stats`)).workers).filter((w) => w.alive).length;
    if (alive >= workers) return log(`${alive} workers attached`);
    if (Date.now() > deadline) assert.fail(`only ${alive} of ${workers} workers attached to the apiserver`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function requests(): Promise<void> {
  await waitForWorkers();
  for (const admin of [proxyAdmin, extprocAdmin, stubAdmin]) await json('POST', `${admin}/stats/reset`);

  const first = await actor('actor-000');
  const second = await actor('actor-000');
  assert.equal(second.worker, first.worker, 'the same actor answered from another worker without a move');
  assert.ok(second.seq > first.seq, 'the actor sequence number did not advance');
  let p = await json<ProxyStats>('GET', `${proxyAdmin}/stats`);
  assert.equal(p.cache.enabled, cacheOn);
  if (cacheOn) {
    assert.equal(p.cache.misses, 1, 'first request should miss the actor cache');
    assert.equal(p.cache.hits, 1, 'second request should hit the actor cache');
  } else {
    assert.equal(p.cache.hits, 0);
  }
  log(`miss then ${cacheOn ? 'hit' : 'slow path again'}: actor-000 on ${first.worker}`);

  const moved = await json<{ workerIp: string | null }>('POST', `${stubAdmin}/actors/demo/actor-000/move`);
  const third = await actor('actor-000');
  if (moved.workerIp !== null) assert.equal(third.worker, moved.workerIp, 'after the move the answer came from a worker other than the new one');
  p = await json<ProxyStats>('GET', `${proxyAdmin}/stats`);
  if (cacheOn && moved.workerIp !== first.worker) assert.ok(p.reruns.stale >= 1, 'the stale cached binding was not re-run');
  log(`forced move ${first.worker} → ${moved.workerIp ?? '(pending)'}: 200 from ${third.worker}, stale re-runs ${p.reruns.stale}`);

  const other = await actor('actor-001');
  log(`second actor: actor-001 on ${other.worker}`);

  const e = await json<ExtprocStats>('GET', `${extprocAdmin}/stats`);
  // With the cache the slow path runs for the two misses and the re-run; without it, for every request.
  if (cacheOn) assert.ok(e.streams.total >= 3 && e.streams.total <= 4, `extproc streams ${e.streams.total}, expected 3 (+1 if the move raced)`);
  else assert.equal(e.streams.total, 4, 'with the cache off every request must take one ext_proc stream');
  log(`extproc streams ${e.streams.total}`);
}

async function stats(): Promise<void> {
  const p = await json<ProxyStats>('GET', `${proxyAdmin}/stats`);
  const e = await json<ExtprocStats>('GET', `${extprocAdmin}/stats`);
  const s = await json<StubStats>('GET', `${stubAdmin}/stats`);
  log(`proxy requests ${p.requests.total} ${JSON.stringify(p.requests.byStatus)}, cache hits ${p.cache.hits} misses ${p.cache.misses}, extproc streams ${e.streams.total}`);
  assert.ok(p.requests.total > 100, `the load reached the proxy only ${p.requests.total} times`);
  assert.equal(p.requests.byStatus['5xx'] ?? 0, 0, `5xx answers: ${JSON.stringify(p.requests.byStatus)}`);
  assert.equal(p.extproc.errors, 0, 'ext_proc stream errors');
  assert.equal(p.extproc.timeouts, 0, 'ext_proc timeouts');
  assert.equal(p.upstream.identityFailures, 0, 'workers failed the proxy\'s identity check');
  assert.equal(p.upstream.tlsReloadErrors, 0, 'the proxy could not load its TLS files');
  assert.equal(e.streams.active, 0, 'ext_proc streams left open');
  assert.equal(s.deliveries.duplicates, 0, 'an actor received the same request twice');
  if (cacheOn) {
    assert.ok(p.cache.hits > p.cache.misses, 'with the cache on, hits should dominate a steady load');
    assert.ok(e.streams.total < p.requests.total / 2, 'with the cache on, most requests must skip ext_proc');
  } else {
    assert.equal(p.cache.hits, 0);
    assert.ok(e.streams.total >= p.requests.total, 'with the cache off, every request must take an ext_proc stream');
  }
}

const CONNECT_TIMEOUT_MS = 3000;

type Reach = { readonly kind: 'connected' } | { readonly kind: 'failed'; readonly why: string };

/**
 * Names are resolved with c-ares (A records, one 2-second try): on an internal network the resolver cannot
 * forward, so getaddrinfo would wait out its own timeouts for every name that does not exist there, and block
 * the thread pool for the names that do.
 */
const resolver = new Resolver({ timeout: 2000, tries: 1 });

async function tryConnect(target: string): Promise<Reach> {
  const colon = target.lastIndexOf(':');
  const host = target.slice(0, colon).replace(/^\[|\]$/g, '');
  const port = Number(target.slice(colon + 1));
  if (net.isIP(host)) return connectOnce(host, port);
  try {
    const [address] = await resolver.resolve4(host);
    return address === undefined ? { kind: 'failed', why: 'no address' } : connectOnce(address, port);
  } catch (err) {
    return { kind: 'failed', why: `name does not resolve here (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
  }
}

/** One TCP connect attempt; a timeout counts as a failure (a dropped SYN is as unreachable as a refusal). */
function connectOnce(host: string, port: number): Promise<Reach> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (reach: Reach): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reach);
    };
    const timer = setTimeout(() => done({ kind: 'failed', why: `no answer within ${CONNECT_TIMEOUT_MS} ms` }), CONNECT_TIMEOUT_MS);
    socket.once('connect', () => done({ kind: 'connected' }));
    socket.once('error', (err: NodeJS.ErrnoException) => done({ kind: 'failed', why: err.code ?? err.message }));
  });
}

function targets(name: string): string[] {
  return (env[name] ?? '').split(',').map((t) => t.trim()).filter((t) => t.length > 0);
}

async function isolation(): Promise<void> {
  const unreachable = targets('CHECK_UNREACHABLE');
  const reachable = targets('CHECK_REACHABLE');
  assert.ok(unreachable.length > 0, 'CHECK_UNREACHABLE lists no targets');
  const results = await Promise.all([...unreachable, ...reachable].map(async (t) => [t, await tryConnect(t)] as const));
  for (const [target, reach] of results) {
    const expectReachable = reachable.includes(target);
    if (expectReachable) assert.equal(reach.kind, 'connected', `${target} should be reachable: ${reach.kind === 'failed' ? reach.why : ''}`);
    else assert.equal(reach.kind, 'failed', `${target} is reachable from here but must not be`);
    log(`${target}: ${reach.kind === 'connected' ? 'reachable' : `unreachable (${reach.why})`}`);
  }
}

async function addressOf(target: string): Promise<{ readonly name: string; readonly ip: string; readonly port: number }> {
  const colon = target.lastIndexOf(':');
  const name = target.slice(0, colon);
  const [ip] = await resolver.resolve4(name);
  assert.ok(ip !== undefined, `${name} does not resolve`);
  return { name, ip, port: Number(target.slice(colon + 1)) };
}

/** A TLS handshake without a client certificate; what the server presented, and whether it answered a request. */
function probeTls(ip: string, port: number, opts: tls.ConnectionOptions): Promise<{ readonly cert: tls.PeerCertificate; readonly answered: boolean }> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ ...opts, host: ip, port });
    const timer = setTimeout(() => socket.destroy(new Error(`no TLS answer from ${ip}:${port} within ${CONNECT_TIMEOUT_MS} ms`)), CONNECT_TIMEOUT_MS);
    let cert: tls.PeerCertificate | undefined;
    let answered = false;
    socket.once('secureConnect', () => {
      cert = socket.getPeerCertificate();
      socket.write('GET / HTTP/1.1\r\nhost: tls-check\r\nconnection: close\r\n\r\n');
    });
    socket.on('data', (chunk: Buffer) => {
      if (chunk.toString('latin1').startsWith('HTTP/')) answered = true;
    });
    const done = (err?: Error): void => {
      clearTimeout(timer);
      if (cert === undefined) reject(err ?? new Error(`${ip}:${port} closed before the handshake completed`));
      else resolve({ cert, answered });
    };
    socket.once('error', done);
    socket.once('close', () => done());
  });
}

async function tlsHops(): Promise<void> {
  const ca = readFileSync(env.CHECK_TLS_CA ?? '/certs/ca.pem');
  const prefix = env.CHECK_TLS_WORKER_PREFIX ?? '';
  assert.ok(prefix.startsWith('spiffe://'), 'CHECK_TLS_WORKER_PREFIX is not a SPIFFE prefix');
  const workerTargets = targets('CHECK_TLS_WORKERS');
  assert.ok(workerTargets.length > 0, 'CHECK_TLS_WORKERS lists no workers');
  for (const target of workerTargets) {
    const { name, ip, port } = await addressOf(target);
    // The worker is checked by its SPIFFE URI, not by name: it has no DNS or IP SAN.
    const probe = await probeTls(ip, port, { ca, checkServerIdentity: () => undefined, ALPNProtocols: ['http/1.1'] });
    assert.equal(probe.cert.subjectaltname, `URI:${prefix}${name}`, `${target} presented ${probe.cert.subjectaltname}`);
    assert.equal(probe.answered, false, `${target} answered a client without a certificate`);
    log(`${target}: mTLS, presents ${probe.cert.subjectaltname}, refuses a client without a certificate`);
  }
  const control = await addressOf(env.CHECK_TLS_CONTROL ?? 'apiserver-control:50052');
  const probe = await probeTls(control.ip, control.port, { ca, servername: control.name, ALPNProtocols: ['h2'] });
  log(`${control.name}:${control.port}: TLS, certificate valid for ${control.name} (${probe.cert.subjectaltname})`);
}

/** `docker compose config` as printed into `file`: every service hardened (scripts/compose/hardening.ts). */
function configPhase(file: string | undefined): void {
  assert.ok(file !== undefined, 'config needs the file docker compose config wrote');
  const problems = hardeningProblems(readFileSync(file, 'utf8'));
  assert.deepEqual(problems, [], `services not hardened:\n${problems.join('\n')}`);
  log('every service: read-only root, cap_drop ALL, no-new-privileges, memory and pids limits, health checks every >= 5 s');
}

/** From the host: every published admin answers a read with a DNS-rebinding Host 403, and /ready 200. */
async function adminPhase(): Promise<void> {
  for (const admin of [proxyAdmin, extprocAdmin, stubAdmin]) {
    for (const path of ['/cache', '/stats', '/metrics']) {
      const a = await call('GET', `${admin}${path}`, { host: 'rebind.evil.example' });
      assert.equal(a.status, 403, `GET ${admin}${path} with Host rebind.evil.example → ${a.status}`);
    }
    const ready = await call('GET', `${admin}/ready`, { host: 'rebind.evil.example' });
    assert.equal(ready.status, 200, `GET ${admin}/ready with a foreign Host → ${ready.status}`);
    log(`${admin}: reads with a rebinding Host refused (403), /ready open`);
  }
}

/**
 * From the host, after test-compose.sh reset the proxy's /stats and made its CONNECTs to the egress listener: two to
 * the allowed destination (tunnels that carried a request and its answer), one to a port outside the policy, one
 * without a client certificate. With the verdict cache on, the second allowed CONNECT is a hit: two slow paths for
 * the allowed and the denied destination, both verdicts stored; off, every CONNECT is a slow path.
 */
async function egressPhase(): Promise<void> {
  const s = await json<ProxyStats>('GET', `${proxyAdmin}/stats`);
  const t = s.egressTunnels;
  assert.ok(t !== undefined, 'the proxy runs no egress listener (/stats has no egressTunnels)');
  assert.equal(t.connects.allowed, 2, `allowed CONNECTs: ${JSON.stringify(t.connects)}`);
  assert.equal(t.connects.denied, 1, `denied CONNECTs: ${JSON.stringify(t.connects)}`);
  assert.equal(t.connects.invalid_certificate, 1, `CONNECTs with an invalid certificate: ${JSON.stringify(t.connects)}`);
  assert.equal(t.certificateRefusals['no-certificate'], 1, `certificate refusals: ${JSON.stringify(t.certificateRefusals)}`);
  assert.equal(t.opened, 2, 'tunnels opened');
  assert.ok(t.bytes.fromActor > 0 && t.bytes.toActor > 0, `bytes through the tunnels: ${JSON.stringify(t.bytes)}`);
  const c = s.egress.cache;
  assert.equal(c.enabled, egressCacheOn);
  if (egressCacheOn) {
    assert.deepEqual([c.hits, c.misses, c.slowPaths, c.stored], [1, 2, 2, 2], `verdict cache ${JSON.stringify(c)}: one hit, the allowed and the denied verdict stored`);
  } else {
    assert.deepEqual([c.hits, c.slowPaths], [0, 3], `verdict cache off: every CONNECT with a certificate through ext_proc ${JSON.stringify(c)}`);
  }
  log(`egress: 2 allowed (${t.bytes.fromActor} bytes out, ${t.bytes.toActor} back), 1 denied, 1 without a certificate; verdict cache ${egressCacheOn ? `on: ${c.hits} hit, ${c.slowPaths} slow paths` : `off: ${c.slowPaths} slow paths`}`);
}

const phase = process.argv[2];
try {
  if (phase === 'requests') await requests();
  else if (phase === 'stats') await stats();
  else if (phase === 'isolation') await isolation();
  else if (phase === 'tls') await tlsHops();
  else if (phase === 'h2') await h2Phase(suffix, log);
  else if (phase === 'extproc') await extprocPhase(log);
  else if (phase === 'admin') await adminPhase();
  else if (phase === 'egress') await egressPhase();
  else if (phase === 'config') configPhase(process.argv[3]);
  else throw new Error(`usage: check.js requests|stats|isolation|tls|h2|extproc|admin|egress|config FILE (got "${phase ?? ''}")`);
  log(`${phase}: ok`);
} catch (err) {
  process.stderr.write(`compose-check (cache ${cacheOn ? 'on' : 'off'}) FAILED in ${phase}: ${(err as Error).message}\n`);
  process.exit(1);
}
