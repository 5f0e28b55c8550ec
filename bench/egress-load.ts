/**
 * The egress load: actors opening tunnels through the egress listener as atunnel does over HTTP/2 — one pooled TLS
 * connection per actor (its own client certificate, ALPN h2), one CONNECT stream per tunnel — each tunnel carrying
 * one small HTTP/1.1 request to the destination and its answer, then closed. `concurrency` tunnels are in flight at
 * once, each loop taking the next actor in turn, so every actor is used evenly. What it counts: tunnels (a CONNECT
 * answered, any status), their statuses, failures (a stream error, a tunnel that did not carry its answer), and the
 * latency of the whole tunnel (CONNECT to the answer through it).
 */
import http2, { type ClientHttp2Session } from 'node:http2';
import { LatencyRecorder } from './latency.js';
import type { LoadResult } from './load.js';

export interface EgressActorCredential {
  /** `atespace/name`, for messages. */
  readonly actor: string;
  /** The actor's certificate and key, PEM (one bundle). */
  readonly bundle: string;
}

export interface EgressLoadPlan {
  /** The egress listener, `https://host:port`. */
  readonly url: string;
  /** The CA that signed the listener's certificate (PEM). */
  readonly ca: string;
  /** The name the listener's certificate carries (atunnel's `atenet-egress.ate-system.svc`). */
  readonly servername: string;
  readonly actors: readonly EgressActorCredential[];
  /** `IP:port` every tunnel opens. */
  readonly destination: string;
  /** Tunnels in flight at once. */
  readonly concurrency: number;
  /** Each tunnel's own bound. */
  readonly timeoutMs?: number;
}

const REQUEST = Buffer.from('GET / HTTP/1.1\r\nHost: destination\r\nConnection: close\r\n\r\n', 'latin1');
const DEFAULT_TIMEOUT_MS = 10_000;

type TunnelOutcome = { readonly kind: 'answered'; readonly status: number } | { readonly kind: 'failed' };

/** One pooled HTTP/2 connection per actor, opened on first use and again when it is gone. */
class ActorSessions {
  readonly #sessions = new Map<number, ClientHttp2Session>();

  constructor(private readonly plan: EgressLoadPlan) {}

  get(index: number): ClientHttp2Session {
    const open = this.#sessions.get(index);
    if (open !== undefined && !open.closed && !open.destroyed) return open;
    const actor = this.plan.actors[index] as EgressActorCredential;
    const session = http2.connect(this.plan.url, { ca: this.plan.ca, cert: actor.bundle, key: actor.bundle, servername: this.plan.servername });
    session.on('error', () => this.#sessions.delete(index));
    session.on('close', () => this.#sessions.delete(index));
    this.#sessions.set(index, session);
    return session;
  }

  close(): Promise<void> {
    const all = [...this.#sessions.values()];
    this.#sessions.clear();
    return Promise.all(all.map((s) => new Promise<void>((resolve) => (s.closed ? resolve() : s.close(() => resolve()))))).then(() => undefined);
  }
}

/** One tunnel: CONNECT, then (on 200) one request through it and its whole answer. */
function oneTunnel(session: ClientHttp2Session, destination: string, timeoutMs: number): Promise<TunnelOutcome> {
  return new Promise<TunnelOutcome>((resolve) => {
    let settled = false;
    const done = (outcome: TunnelOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!stream.destroyed) stream.close();
      resolve(outcome);
    };
    const stream = session.request({ ':method': 'CONNECT', ':authority': destination }, { endStream: false });
    const timer = setTimeout(() => done({ kind: 'failed' }), timeoutMs);
    stream.on('error', () => done({ kind: 'failed' }));
    stream.on('close', () => done({ kind: 'failed' }));
    stream.on('response', (headers) => {
      const status = Number(headers[':status']);
      if (status !== 200) {
        stream.resume();
        stream.on('end', () => done({ kind: 'answered', status }));
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const text = Buffer.concat(chunks).toString('latin1');
        done(text.startsWith('HTTP/1.1 200') ? { kind: 'answered', status } : { kind: 'failed' });
      });
      stream.end(REQUEST);
    });
  });
}

/** Runs the load for `durationS` seconds and returns what the actors saw (`requests` are tunnels). */
export async function runEgressLoad(plan: EgressLoadPlan, durationS: number): Promise<LoadResult> {
  if (plan.actors.length === 0) throw new Error('egress load: no actor credentials');
  const sessions = new ActorSessions(plan);
  const recorder = new LatencyRecorder();
  const statusCounts: Record<string, number> = {};
  let errors = 0;
  let next = 0;
  const timeoutMs = plan.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const cpu0 = process.cpuUsage();
  const started = performance.now();
  const deadline = started + durationS * 1000;
  const loop = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const index = next++ % plan.actors.length;
      const t0 = performance.now();
      const outcome = await oneTunnel(sessions.get(index), plan.destination, timeoutMs);
      if (outcome.kind === 'failed') {
        errors++;
        continue;
      }
      recorder.record(performance.now() - t0);
      statusCounts[String(outcome.status)] = (statusCounts[String(outcome.status)] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: plan.concurrency }, loop));
  const elapsedS = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  await sessions.close();
  const requests = Object.values(statusCounts).reduce((a, b) => a + b, 0);
  return {
    requests,
    durationS: elapsedS,
    rps: requests / elapsedS,
    non2xx: requests - (statusCounts['200'] ?? 0),
    errors,
    timeouts: 0,
    statusCounts,
    latency: recorder.summary(),
    loadgenCpuMs: (cpu.user + cpu.system) / 1000,
    loadgenPeakRssBytes: process.resourceUsage().maxRSS * 1024,
  };
}
