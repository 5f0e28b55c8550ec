/**
 * The fleet scenario's load generator: a closed loop of `connections` clients in this process (undici), each
 * sending one request at a time to a random actor, GETs and — a share of them — POSTs with a body and an
 * `x-request-id` unique across the run (GETs carry none: the replica gives each its own, so a GET that HAProxy
 * retried is never counted as a duplicate; a POST delivered twice is). Every answer and failure is tallied by
 * method (cumulative: a phase is the difference of two snapshots), and every answer's `x-fleet-replica` header
 * (HTTP modes) tells which replica served which actor.
 *
 * `sni` mode: HTTP/2 over TLS to HAProxy, which passes it through to a replica; each actor gets a connection of its
 * own opened with its name as SNI (one wildcard certificate covers every actor), and a share of requests is sent
 * on another actor's connection — what an HTTP/2 client coalescing connections does (RFC 9113 §9.1.1). The replica answers those 421 and the
 * client sends the request again on the actor's own connection (RFC 9110 §15.5.20): counted as `misdirected`,
 * not as a failure unless the retry fails.
 */
import http2 from 'node:http2';
import { Pool } from 'undici';
import { LatencyRecorder, type LatencySummary } from './latency.js';
import { createRng, uniformSampler } from './sampling.js';

export type Method = 'GET' | 'POST';

export interface MethodTally {
  requests: number;
  /** 2xx answers. */
  ok: number;
  non2xx: number;
  /** No answer: the connection failed or closed, or the request timed out. */
  errors: number;
}

export interface FleetTally {
  readonly GET: MethodTally;
  readonly POST: MethodTally;
  readonly statusCounts: Record<string, number>;
  /** `sni`: requests sent on another actor's connection whose first answer is in, and how many of those were 421. */
  coalesced: number;
  misdirected: number;
  /** The first few failure messages (for the notes). */
  readonly errorSamples: string[];
}

export function emptyTally(): FleetTally {
  return { GET: { requests: 0, ok: 0, non2xx: 0, errors: 0 }, POST: { requests: 0, ok: 0, non2xx: 0, errors: 0 }, statusCounts: {}, coalesced: 0, misdirected: 0, errorSamples: [] };
}

function copyTally(t: FleetTally): FleetTally {
  return { GET: { ...t.GET }, POST: { ...t.POST }, statusCounts: { ...t.statusCounts }, coalesced: t.coalesced, misdirected: t.misdirected, errorSamples: [...t.errorSamples] };
}

/** What happened between two snapshots. */
export function tallyDiff(after: FleetTally, before: FleetTally): FleetTally {
  const m = (a: MethodTally, b: MethodTally): MethodTally => ({ requests: a.requests - b.requests, ok: a.ok - b.ok, non2xx: a.non2xx - b.non2xx, errors: a.errors - b.errors });
  const statusCounts: Record<string, number> = {};
  for (const [k, v] of Object.entries(after.statusCounts)) {
    const n = v - (before.statusCounts[k] ?? 0);
    if (n !== 0) statusCounts[k] = n;
  }
  return {
    GET: m(after.GET, before.GET),
    POST: m(after.POST, before.POST),
    statusCounts,
    coalesced: after.coalesced - before.coalesced,
    misdirected: after.misdirected - before.misdirected,
    errorSamples: after.errorSamples.slice(before.errorSamples.length),
  };
}

/**
 * Which replica serves which actor, by the second: in each slot of `slotMs` an actor's owner is the replica that
 * answered most of its requests (a slot with fewer than `minAnswers` answers for it decides nothing, and an
 * occasional answer from another replica — HAProxy's load bound sending one request elsewhere — changes nothing).
 * Since `begin()`, an actor has moved when some slot's owner was not its owner when `begin()` was called.
 */
export class OwnerWatch {
  /** The latest slot's owner of every actor seen. */
  readonly #owner = new Map<string, string>();
  /** This slot's answers: actor → replica → count. */
  #slot = new Map<string, Map<string, number>>();
  #slotStart: number;
  #atBegin: ReadonlyMap<string, string> = new Map();
  readonly #moved = new Set<string>();
  #watching = false;

  constructor(
    private readonly slotMs = 1000,
    private readonly minAnswers = 3,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.#slotStart = now();
  }

  served(actor: string, replica: string): void {
    this.#rollIfDue();
    let counts = this.#slot.get(actor);
    if (counts === undefined) this.#slot.set(actor, (counts = new Map()));
    counts.set(replica, (counts.get(replica) ?? 0) + 1);
  }

  /** Starts watching for moves, from the owners of the latest complete slot. */
  begin(): void {
    this.#rollIfDue();
    this.#atBegin = new Map(this.#owner);
    this.#moved.clear();
    this.#watching = true;
  }

  /** Actors whose owner changed since `begin()` (actors without an owner then do not count). */
  moved(): number {
    this.#roll();
    return this.#moved.size;
  }

  /** The latest owner of every actor seen. */
  owners(): ReadonlyMap<string, string> {
    return this.#owner;
  }

  #rollIfDue(): void {
    if (this.now() - this.#slotStart >= this.slotMs) this.#roll();
  }

  #roll(): void {
    for (const [actor, counts] of this.#slot) {
      let best: string | undefined;
      let most = 0;
      let total = 0;
      for (const [replica, n] of counts) {
        total += n;
        if (n > most) [best, most] = [replica, n];
      }
      if (best === undefined || total < this.minAnswers || most * 2 <= total) continue;
      this.#owner.set(actor, best);
      const before = this.#atBegin.get(actor);
      if (this.#watching && before !== undefined && before !== best) this.#moved.add(actor);
    }
    this.#slot = new Map();
    this.#slotStart = this.now();
  }
}

export interface FleetLoadOptions {
  /** HAProxy's frontend: `http://…`, or `https://…` in `sni` mode. */
  readonly url: string;
  /** Actor names and their Hosts, in the same order. */
  readonly actors: readonly string[];
  readonly hosts: readonly string[];
  readonly connections: number;
  /** Share of requests that are POSTs (0..1). */
  readonly postShare: number;
  readonly seed: number;
  /** Prefix of the POSTs' request ids (unique per run). */
  readonly idPrefix: string;
  /** The replica header of the HTTP modes. */
  readonly replicaHeader: string;
  /** `sni` mode: the CA of the serving certificate and the share of requests sent on another actor's connection. */
  readonly sni?: { readonly ca: Buffer; readonly coalesceShare: number };
}

const TIMEOUT_MS = 30_000;
const ERROR_SAMPLES = 10;

export interface Answer {
  readonly status: number;
  readonly replica: string | undefined;
}

export interface Request {
  readonly method: Method;
  readonly host: string;
  readonly id: string;
}

/** How requests reach HAProxy. */
export interface Transport {
  /** Sends `req` on the connection opened for actor `via` (its own actor's, unless coalescing). */
  send(req: Request, via: number): Promise<Answer>;
  close(): Promise<void>;
}

function path(req: Request): string {
  return req.method === 'GET' ? '/' : '/orders';
}

function body(req: Request): string | undefined {
  return req.method === 'GET' ? undefined : JSON.stringify({ id: req.id, item: 'widget' });
}

/** HTTP/1.1 keep-alive connections to HAProxy, any actor on any of them (HTTP modes). */
class PoolTransport implements Transport {
  readonly #pool: Pool;

  constructor(
    private readonly url: string,
    connections: number,
    private readonly replicaHeader: string,
  ) {
    this.#pool = new Pool(url, { connections, pipelining: 1, keepAliveTimeout: 30_000, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
  }

  async send(req: Request): Promise<Answer> {
    const payload = body(req);
    const headers: Record<string, string> = payload === undefined ? { host: req.host } : { host: req.host, 'content-type': 'application/json', 'x-request-id': req.id };
    const res = await this.#pool.request({ origin: this.url, path: path(req), method: req.method, headers, ...(payload === undefined ? {} : { body: payload }) });
    await res.body.dump();
    const replica = res.headers[this.replicaHeader];
    return { status: res.statusCode, replica: typeof replica === 'string' ? replica : undefined };
  }

  close(): Promise<void> {
    return this.#pool.close();
  }
}

/**
 * HTTP/2 over TLS through HAProxy's passthrough, one connection per actor opened with the actor's name as SNI (a
 * connection that fails is opened again on the next request). A request may be sent on another actor's
 * connection: what a client coalescing connections under one wildcard certificate does.
 */
class H2Transport implements Transport {
  readonly #sessions = new Map<number, http2.ClientHttp2Session>();

  constructor(
    private readonly url: string,
    private readonly hosts: readonly string[],
    private readonly ca: Buffer,
  ) {}

  #session(via: number): http2.ClientHttp2Session {
    const open = this.#sessions.get(via);
    if (open !== undefined && !open.closed && !open.destroyed) return open;
    const session = http2.connect(this.url, { servername: this.hosts[via] as string, ca: this.ca });
    session.on('error', () => undefined); // each stream reports its own failure
    session.once('close', () => {
      if (this.#sessions.get(via) === session) this.#sessions.delete(via);
    });
    this.#sessions.set(via, session);
    return session;
  }

  send(req: Request, via: number): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const payload = body(req);
      const headers: http2.OutgoingHttpHeaders = { ':method': req.method, ':path': path(req), ':authority': req.host };
      if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'x-request-id': req.id });
      let stream: http2.ClientHttp2Stream;
      try {
        stream = this.#session(via).request(headers, { endStream: payload === undefined });
      } catch (err) {
        reject(err as Error);
        return;
      }
      let status = 0;
      stream.setTimeout(TIMEOUT_MS, () => stream.close(http2.constants.NGHTTP2_CANCEL));
      stream.on('response', (h) => (status = Number(h[':status'])));
      stream.on('error', reject);
      stream.on('close', () => (status === 0 ? reject(new Error(`stream closed without a response (code ${stream.rstCode})`)) : resolve({ status, replica: undefined })));
      stream.resume();
      if (payload !== undefined) stream.end(payload);
    });
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.#sessions.values()].map((s) => new Promise<void>((resolve) => (s.closed ? resolve() : s.close(() => resolve())))),
    );
  }
}

export class FleetLoad {
  readonly owners = new OwnerWatch();
  #tally = emptyTally();
  #latency = new LatencyRecorder();
  #stopped = false;
  #loops: Promise<void>[] = [];
  readonly #transport: Transport;
  /** Actors answered 2xx at least once. */
  readonly #answeredActors = new Set<number>();

  /** `transport`: how requests leave (default: HTTP/1.1 pool, or HTTP/2 per actor in `sni` mode); tests pass their own. */
  constructor(
    readonly opts: FleetLoadOptions,
    transport?: Transport,
  ) {
    this.#transport =
      transport ?? (opts.sni === undefined ? new PoolTransport(opts.url, opts.connections, opts.replicaHeader) : new H2Transport(opts.url, opts.hosts, opts.sni.ca));
  }

  /** Starts the clients; they run until `stop()`. */
  start(): void {
    for (let i = 0; i < this.opts.connections; i++) this.#loops.push(this.#loop(i));
  }

  /** Stops the clients (each finishes the request it has in flight) and closes the connections. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await Promise.all(this.#loops);
    await this.#transport.close();
  }

  /** A copy of the tallies so far. */
  snapshot(): FleetTally {
    return copyTally(this.#tally);
  }

  /** Starts a new latency record; `latency()` summarises what was recorded since. */
  resetLatency(): void {
    this.#latency = new LatencyRecorder();
  }

  latency(): LatencySummary {
    return this.#latency.summary();
  }

  /** How many different actors have been answered 2xx so far (each replica has learned its actors once all are). */
  answeredActors(): number {
    return this.#answeredActors.size;
  }

  async #loop(client: number): Promise<void> {
    const rng = createRng((this.opts.seed * 7919 + client * 104_729) >>> 0);
    const pick = uniformSampler(this.opts.actors.length, rng);
    for (let n = 0; !this.#stopped; n++) {
      const actor = pick();
      const method: Method = rng() < this.opts.postShare ? 'POST' : 'GET';
      await this.#one(actor, { method, host: this.opts.hosts[actor] as string, id: `${this.opts.idPrefix}-${client}-${n}` }, rng);
    }
  }

  async #one(actor: number, req: Request, rng: () => number): Promise<void> {
    const t = this.#tally[req.method];
    t.requests++;
    const started = performance.now();
    try {
      const n = this.opts.actors.length;
      const sni = this.opts.sni;
      if (sni !== undefined && n > 1 && rng() < sni.coalesceShare) {
        // On a connection opened for another actor: the replica must answer 421, and the client goes again on
        // the actor's own connection. Counted once its first answer is in, together with whether that was a 421,
        // so a snapshot taken while one is in flight never holds a coalesced request without its answer.
        const first = await this.#transport.send(req, (actor + 1 + Math.floor(rng() * (n - 1))) % n);
        this.#tally.coalesced++;
        if (first.status !== 421) {
          this.#answered(t, first.status, started);
          return;
        }
        this.#tally.misdirected++;
      }
      const answer = await this.#transport.send(req, actor);
      if (answer.replica !== undefined) this.owners.served(this.opts.actors[actor] as string, answer.replica);
      if (answer.status >= 200 && answer.status <= 299) this.#answeredActors.add(actor);
      this.#answered(t, answer.status, started);
    } catch (err) {
      t.errors++;
      if (this.#tally.errorSamples.length < ERROR_SAMPLES) this.#tally.errorSamples.push(`${req.method}: ${(err as Error).message}`);
    }
  }

  #answered(t: MethodTally, status: number, started: number): void {
    this.#latency.record(performance.now() - started);
    this.#tally.statusCounts[status] = (this.#tally.statusCounts[status] ?? 0) + 1;
    if (status >= 200 && status <= 299) t.ok++;
    else t.non2xx++;
  }
}
