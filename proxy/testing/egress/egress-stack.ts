/**
 * The egress path's real components for end-to-end tests: apiserver-stub (actors, their egress policies, and their
 * certificates from its actor identity CA) and extproc's egress mode, both in the test's process from the flags
 * their processes take, and proxies with the egress listener in front of them (in this process, or as processes for
 * `--workers N`), each with a verdict cache TTL of its own. With the clients a test needs to read each side: the
 * stub's admin (actors, policies, certificates, the outage, its control-plane call counts) and the proxy's admin (the
 * `egress.cache` counters, the `/cache/egress` verdicts).
 */
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { workerNet } from '../../../lib/loopback.js';
import { actorCaFiles, createActorCa } from '../../../lib/tls/actor-certs.js';
import type { InProcessComponent } from '../../../lib/testing/component.js';
import { eventually } from '../../../lib/testing/wait.js';
import { startStubInProcess } from '../../../apiserver-stub/testing/in-process.js';
import { startExtprocInProcess } from '../../../extproc/testing/in-process.js';
import { startTestProxy, type ProxyHandle } from '../proxy.js';
import { h1Connect, readBytes, type EgressTarget } from '../../egress/testing/egress-clients.js';
import { egressPki, type ClientCredentials, type EgressPki } from '../../egress/testing/egress-pki.js';
import type { ListedVerdict } from '../../egress/egress-cache-admin.js';
import type { EgressCacheStatsBlock } from '../../egress/egress-cache-stats.js';

export const ATESPACE = 'demo';

export interface JsonAnswer<T> {
  readonly status: number;
  readonly body: T;
}

export async function adminCall<T = Record<string, unknown>>(base: string, method: string, route: string, body?: unknown): Promise<JsonAnswer<T>> {
  const res = await fetch(`${base}${route}`, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as T };
}

/** An actor certificate as the stub minted it: the credentials, its NotAfter, its digest and its files (for curl). */
export interface ActorCertificate extends ClientCredentials {
  readonly certPem: string;
  readonly keyPem: string;
  readonly notAfterMs: number;
  /** sha256 of its DER, lowercase hex: the verdict cache's key. */
  readonly digest: string;
  /** Its subjectAltName (the one URI naming the actor). */
  readonly uri: string;
  /** Its public key, SPKI PEM. */
  readonly publicKey: string;
}

/** The control-plane reads the stub answered so far, every gRPC code counted. */
export interface ControlCalls {
  readonly getActor: number;
  readonly policy: number;
}

export interface EgressProxy {
  readonly handle: ProxyHandle;
  readonly target: EgressTarget;
  /** `https://127.0.0.1:<port>`, the listener as a proxy URL. */
  readonly url: string;
  admin<T = Record<string, unknown>>(method: string, route: string, body?: unknown): Promise<JsonAnswer<T>>;
  /** The `egress.cache` block of `/stats` (summed over the workers of a cluster). */
  cacheStats(): Promise<EgressCacheStatsBlock>;
  /** The live verdicts of one certificate (a single process's listing). */
  verdictsOf(cert: ActorCertificate): Promise<ListedVerdict[]>;
  /** Waits until no verdict of `cert` to `destination` is live any more (it expired). */
  untilExpired(cert: ActorCertificate, destination: string, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface EgressStack {
  readonly pki: EgressPki;
  /** The listener's CA as a file (curl's `--proxy-cacert`). */
  readonly serverCaFile: string;
  readonly stub: InProcessComponent;
  readonly extproc: InProcessComponent;
  stubAdmin<T = Record<string, unknown>>(method: string, route: string, body?: unknown): Promise<JsonAnswer<T>>;
  /** Resumes `name` and mints a certificate for it through the stub's admin, as the worker asks for one. */
  certificate(name: string, opts?: { readonly lifetimeMs?: number }): Promise<ActorCertificate>;
  /** Sets `name`'s egress policy (asserting the stub took it). */
  setPolicy(name: string, policy: unknown): Promise<void>;
  controlCalls(): Promise<ControlCalls>;
  /** A proxy with the egress listener and the given verdict cache TTL (in this process unless `process`). */
  startProxy(opts: { readonly ttlMs: number; readonly process?: boolean; readonly args?: readonly string[] }): Promise<EgressProxy>;
  /** Writes `cert`'s certificate and key to files (for curl). */
  files(cert: ActorCertificate): Promise<{ readonly certFile: string; readonly keyFile: string }>;
  /** Stops the proxies started, extproc and the stub, and removes the files (the test PKI's too). */
  stop(): Promise<void>;
}

const PEM_BLOCK = /-----BEGIN ([A-Z ]+)-----[\s\S]+?-----END \1-----\n?/g;

function split(bundle: string): { certPem: string; keyPem: string } {
  const blocks = [...bundle.matchAll(PEM_BLOCK)];
  const certPem = blocks.filter((b) => b[1] === 'CERTIFICATE').map((b) => b[0]).join('');
  const keyPem = blocks.filter((b) => b[1]?.includes('PRIVATE KEY')).map((b) => b[0]).join('');
  if (certPem === '' || keyPem === '') throw new Error('the minted bundle holds no certificate or no key');
  return { certPem, keyPem };
}

/** A stub-minted bundle (certificate, then key) and its NotAfter, described. */
export function describeCertificate(bundle: string, notAfterMs: number): ActorCertificate {
  const { certPem, keyPem } = split(bundle);
  const x509 = new X509Certificate(certPem);
  return {
    cert: certPem,
    key: keyPem,
    certPem,
    keyPem,
    notAfterMs,
    digest: createHash('sha256').update(x509.raw).digest('hex'),
    uri: x509.subjectAltName ?? '',
    publicKey: x509.publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

export async function startEgressStack(opts: { readonly actors?: number } = {}): Promise<EgressStack> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-egress-stack-'));
  await createActorCa(dir);
  const pki = await egressPki();
  const serverCaFile = path.join(dir, 'egress-server-ca.crt');
  await writeFile(serverCaFile, pki.serverCa);
  const net = await workerNet();
  const actors = opts.actors ?? 6;
  const stub = await startStubInProcess([
    '--actor-ca-dir', dir, '--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--workers', String(actors), '--worker-ip-base', net.ipBase,
    '--worker-port', String(net.port), '--actors', String(actors), '--atespace', ATESPACE, '--cold-resume-ms', '5', '--resolve-latency-ms', '0',
  ]);
  const extproc = await startExtprocInProcess(['--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', '--apiserver', stub.addresses.grpc as string, '--worker-port', String(net.port)]);
  const proxies: EgressProxy[] = [];
  let files = 0;

  const stubAdmin = <T = Record<string, unknown>>(method: string, route: string, body?: unknown): Promise<JsonAnswer<T>> =>
    adminCall<T>(`http://${stub.addresses.admin}`, method, route, body);

  const stack: EgressStack = {
    pki,
    serverCaFile,
    stub,
    extproc,
    stubAdmin,
    async certificate(name, certOpts = {}) {
      const resumed = await stubAdmin('POST', `/actors/${ATESPACE}/${name}/resume`);
      if (resumed.status !== 200) throw new Error(`resume ${name}: ${resumed.status} ${JSON.stringify(resumed.body)}`);
      const minted = await stubAdmin<{ bundle: string; notAfterMs: number }>(
        'POST',
        `/actors/${ATESPACE}/${name}/certificate`,
        certOpts.lifetimeMs === undefined ? undefined : { lifetimeMs: certOpts.lifetimeMs },
      );
      if (minted.status !== 200) throw new Error(`certificate of ${name}: ${minted.status} ${JSON.stringify(minted.body)}`);
      return describeCertificate(minted.body.bundle, minted.body.notAfterMs);
    },
    async setPolicy(name, policy) {
      const set = await stubAdmin('PUT', `/actors/${ATESPACE}/${name}/egress-policy`, policy);
      if (set.status !== 200) throw new Error(`policy of ${name}: ${set.status} ${JSON.stringify(set.body)}`);
    },
    async controlCalls() {
      const rpc = (await stubAdmin<{ rpc: Record<string, Record<string, number> | undefined> }>('GET', '/stats')).body.rpc;
      const sum = (counts: Record<string, number> | undefined): number => Object.values(counts ?? {}).reduce((a, b) => a + b, 0);
      return { getActor: sum(rpc.GetActor), policy: sum(rpc.GetActorEgressPolicy) };
    },
    async startProxy(p) {
      const args = [
        '--egress-listen', '127.0.0.1:0',
        '--egress-tls-cert', pki.server.certFile,
        '--egress-tls-key', pki.server.keyFile,
        '--egress-client-ca', actorCaFiles(dir).certFile,
        '--egress-cache-ttl-ms', String(p.ttlMs),
        ...(p.args ?? []),
      ];
      const extprocAddress = extproc.addresses.grpc as string;
      const handle: ProxyHandle = p.process === true ? await startTestProxy({ extproc: extprocAddress, args }) : await startTestProxy({ mode: 'in-process', extproc: extprocAddress, args });
      const address = handle.addresses.egress as string;
      const port = Number(address.slice(address.lastIndexOf(':') + 1));
      const admin = <T = Record<string, unknown>>(method: string, route: string, body?: unknown): Promise<JsonAnswer<T>> => adminCall<T>(handle.admin, method, route, body);
      const verdictsOf = async (cert: ActorCertificate): Promise<ListedVerdict[]> => {
        const listed = await admin<{ verdicts: ListedVerdict[] }>('GET', `/cache/egress?cert=${cert.digest}`);
        if (listed.status !== 200) throw new Error(`GET /cache/egress: ${listed.status} ${JSON.stringify(listed.body)}`);
        return listed.body.verdicts;
      };
      const proxy: EgressProxy = {
        handle,
        target: { host: '127.0.0.1', port, ca: pki.serverCa },
        url: `https://127.0.0.1:${port}`,
        admin,
        cacheStats: async () => (await admin<{ egress: { cache: EgressCacheStatsBlock } }>('GET', '/stats')).body.egress.cache,
        verdictsOf,
        untilExpired: async (cert, destination, timeoutMs = p.ttlMs + 10_000) => {
          await eventually(async () => ((await verdictsOf(cert)).some((v) => v.destination === destination) ? undefined : true), timeoutMs, `the verdict of ${destination} expiring`);
        },
        stop: () => handle.stop(),
      };
      proxies.push(proxy);
      return proxy;
    },
    async files(cert) {
      const base = path.join(dir, `client-${files++}`);
      await writeFile(`${base}.crt`, cert.certPem);
      await writeFile(`${base}.key`, cert.keyPem, { mode: 0o600 });
      return { certFile: `${base}.crt`, keyFile: `${base}.key` };
    },
    async stop() {
      for (const p of proxies) await p.stop().catch(() => undefined);
      await extproc.stop();
      await stub.stop();
      await rm(dir, { recursive: true, force: true });
      await pki.close();
    },
  };
  return stack;
}

/** One CONNECT's answer, and what it cost: the cache's hits and misses, and the control plane's reads. */
export interface Measured {
  readonly status: number;
  readonly body: string;
  readonly hits: number;
  readonly misses: number;
  readonly getActor: number;
  readonly policy: number;
}

/**
 * Runs `connect` (one CONNECT, answered when it resolves) and measures the counters around it. Nothing else may send
 * CONNECTs meanwhile (the tests of one file run one at a time).
 */
export async function measured(stack: EgressStack, proxy: EgressProxy, connect: () => Promise<{ readonly status: number; readonly body: string }>): Promise<Measured> {
  const [s0, c0] = await Promise.all([proxy.cacheStats(), stack.controlCalls()]);
  const { status, body } = await connect();
  const [s1, c1] = await Promise.all([proxy.cacheStats(), stack.controlCalls()]);
  return { status, body, hits: s1.hits - s0.hits, misses: s1.misses - s0.misses, getActor: c1.getActor - c0.getActor, policy: c1.policy - c0.policy };
}

/** The counters of a miss that asked the control plane (`getActor`, `policy`: the reads extproc made). */
export const miss = (status: number, body: string, reads: { getActor: number; policy: number }): Measured => ({ status, body, hits: 0, misses: 1, ...reads });
/** The counters of a hit: no control-plane read. */
export const hit = (status: number, body: string): Measured => ({ status, body, hits: 1, misses: 0, getActor: 0, policy: 0 });

/**
 * `CONNECT destination` over HTTP/1.1 on a fresh connection; allowed, `ping` is sent through the tunnel (to an echo
 * destination) and the body is what came back. The connection is closed after.
 */
export async function h1Through(proxy: EgressProxy, creds: ClientCredentials, destination: string): Promise<{ status: number; body: string }> {
  const answer = await h1Connect(proxy.target, creds, destination);
  try {
    if (answer.status !== 200) return { status: answer.status, body: answer.body };
    answer.socket.write('ping');
    return { status: 200, body: await readBytes(answer.socket, 4) };
  } finally {
    answer.socket.destroy();
  }
}

/** Runs `fn` (one CONNECT) and throws unless `proxy` stored exactly one verdict meanwhile. */
export async function storing<T>(proxy: EgressProxy, fn: () => Promise<T>): Promise<T> {
  const before = (await proxy.cacheStats()).stored;
  const result = await fn();
  const stored = (await proxy.cacheStats()).stored - before;
  if (stored !== 1) throw new Error(`expected the CONNECT's verdict to be cached (1 stored), got ${stored}`);
  return result;
}
