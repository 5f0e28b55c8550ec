/**
 * The egress scenario's revocation phase (after egress-C's measured window): each of a few actors opens `perActor`
 * tunnels that stay open (one pooled HTTP/2 connection per actor, as atunnel keeps; each tunnel carries one request
 * and its answer, then idles), then every actor's policy is removed through the stub's admin, one actor after the
 * other, `spacingMs` apart (spread over one TTL, so the changes fall at different points of the grants' re-validation
 * schedule), and the phase records when each tunnel closes. The lag of a tunnel is from its actor's policy change
 * (the stub's answer to the DELETE) to the moment the tunnel's stream closed at the actor; the proxy's bound is one
 * verdict TTL plus one ext_proc round trip. A tunnel still open `waitMs` after the last change is counted open.
 */
import http2, { type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { summarize } from './latency.js';
import type { EgressActorCredential } from './egress-load.js';
import type { EgressRevocationUsage } from './types.js';

export interface RevocationPlan {
  /** The egress listener, `https://host:port`. */
  readonly url: string;
  readonly ca: string;
  readonly servername: string;
  /** The actors whose policies are removed. */
  readonly actors: readonly EgressActorCredential[];
  readonly destination: string;
  /** Tunnels each actor holds open. */
  readonly perActor: number;
  /** Removes `actor`'s egress policy; resolves once the control plane answered. */
  removePolicy(actor: EgressActorCredential): Promise<void>;
  /** Between two actors' policy changes. */
  readonly spacingMs: number;
  /** How long to wait for the tunnels to close after the last change. */
  readonly waitMs: number;
  /** The proxy's verdict TTL (for the report's bound). */
  readonly ttlMs: number | null;
}

const REQUEST = Buffer.from('GET / HTTP/1.1\r\nHost: destination\r\n\r\n', 'latin1');
const OPEN_TIMEOUT_MS = 10_000;

interface HeldTunnel {
  readonly actor: number;
  readonly stream: ClientHttp2Stream;
  /** performance.now() when the stream closed. */
  closedAt: number | undefined;
}

function connect(plan: RevocationPlan, actor: EgressActorCredential): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(plan.url, { ca: plan.ca, cert: actor.bundle, key: actor.bundle, servername: plan.servername });
    session.once('connect', () => resolve(session));
    session.once('error', reject);
  });
}

/** A CONNECT that carried one request and its answer and stays open; undefined when it could not. */
function holdTunnel(session: ClientHttp2Session, destination: string, actor: number): Promise<HeldTunnel | undefined> {
  return new Promise((resolve) => {
    const stream = session.request({ ':method': 'CONNECT', ':authority': destination }, { endStream: false });
    const held: HeldTunnel = { actor, stream, closedAt: undefined };
    let answered = false;
    const fail = (): void => {
      if (answered) return;
      answered = true;
      clearTimeout(timer);
      stream.destroy();
      resolve(undefined);
    };
    const timer = setTimeout(fail, OPEN_TIMEOUT_MS);
    stream.on('error', () => undefined);
    stream.once('close', () => {
      held.closedAt = performance.now();
      fail();
    });
    stream.once('response', (headers) => {
      if (Number(headers[':status']) !== 200) return fail();
      let text = '';
      const onData = (chunk: Buffer): void => {
        text += chunk.toString('latin1');
        if (!/\r\n\r\n/.test(text)) return;
        stream.off('data', onData);
        stream.resume(); // what else comes (nothing, until the close) is read and dropped
        answered = true;
        clearTimeout(timer);
        resolve(text.startsWith('HTTP/1.1 200') ? held : (stream.destroy(), undefined));
      };
      stream.on('data', onData);
      stream.write(REQUEST);
    });
  });
}

export async function runRevocation(plan: RevocationPlan): Promise<EgressRevocationUsage> {
  const sessions: ClientHttp2Session[] = [];
  const held: HeldTunnel[] = [];
  try {
    for (const [index, actor] of plan.actors.entries()) {
      const session = await connect(plan, actor);
      session.on('error', () => undefined);
      sessions.push(session);
      const opened = await Promise.all(Array.from({ length: plan.perActor }, () => holdTunnel(session, plan.destination, index)));
      for (const t of opened) if (t !== undefined) held.push(t);
    }
    const changedAt = new Map<number, number>();
    for (const [index, actor] of plan.actors.entries()) {
      if (index > 0) await new Promise((r) => setTimeout(r, plan.spacingMs));
      await plan.removePolicy(actor);
      changedAt.set(index, performance.now());
    }
    const deadline = performance.now() + plan.waitMs;
    while (held.some((t) => t.closedAt === undefined) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const lags = held.flatMap((t) => (t.closedAt === undefined ? [] : [Math.max(0, t.closedAt - (changedAt.get(t.actor) ?? t.closedAt))]));
    const s = summarize(lags);
    return {
      actors: plan.actors.length,
      tunnelsOpen: held.length,
      tunnelsClosed: lags.length,
      lagMs: lags.length === 0 ? null : { p50: round(s.p50Ms), p99: round(s.p99Ms), max: round(s.maxMs) },
      ttlMs: plan.ttlMs,
    };
  } finally {
    for (const s of sessions) s.destroy();
  }
}

const round = (ms: number): number => Math.round(ms * 10) / 10;
