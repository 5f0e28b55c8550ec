/**
 * The overload scenario's floods, each sent to the proxy's ingress on 127.0.0.1 only, each counting what its own
 * clients saw (`FloodOutcome`), each stopped by `stop()`, which closes every connection it opened (with a reset,
 * so 10,000 closed connections leave no TIME_WAIT behind on the bench's side):
 * - idle: connections opened and held, nothing sent;
 * - slowloris: connections sending a request head one byte at a time, a head that never ends;
 * - uploads: concurrent 1 MiB POSTs to actors that answer some seconds after the body, each uploader sending its
 *   next one as soon as the last is answered;
 * - cold: one GET per connection, each for a different suspended actor, every connection opened first and every
 *   request written in the same turn of the event loop.
 */
import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import net from 'node:net';
import { Pool } from 'undici';
import { summarize } from './latency.js';
import type { FloodKind, FloodOutcome } from './types.js';

/** Connections being opened at once (the proxy's listen backlog is node's default, 511). */
const CONNECT_CONCURRENCY = 256;
const CONNECT_TIMEOUT_MS = 10_000;
/** Slowloris: how often each connection writes its next byte, and the ticker spreading those writes. */
export const SLOWLORIS_INTERVAL_MS = 500;
const SLOWLORIS_TICK_MS = 10;
/** cold: how long a request may take before it counts as timed out. */
const COLD_DEADLINE_MS = 60_000;
/** The most of an answer read to find its status line and Retry-After. */
const HEAD_SNIFF_BYTES = 8192;

export interface FloodTarget {
  readonly host: '127.0.0.1';
  readonly port: number;
}

/** The proxy's ingress URL (`http://127.0.0.1:PORT`) as a flood target; anything not on 127.0.0.1 is refused. */
export function floodTarget(url: string): FloodTarget {
  const u = new URL(url);
  if (u.protocol !== 'http:' || u.hostname !== '127.0.0.1') throw new Error(`overload: the floods go to http://127.0.0.1 only, not ${url}`);
  return { host: '127.0.0.1', port: Number(u.port) };
}

export interface Flood {
  readonly kind: FloodKind;
  /** Resolves once the flood is in place (every connection tried; cold: every request written). */
  readonly established: Promise<void>;
  /** cold: resolves once every request was answered or failed. The other floods never finish by themselves. */
  readonly finished: Promise<void>;
  /** Stops the flood, closes every connection it opened, and answers what it saw. */
  stop(): Promise<FloodOutcome>;
}

/** The counts every flood keeps. */
class Tally {
  attempted = 0;
  connected = 0;
  readonly connectErrors: Record<string, number> = {};
  requests = 0;
  readonly statusCounts: Record<string, number> = {};
  retryAfter = 0;
  readonly errors: Record<string, number> = {};
  closedByProxy = 0;
  bytesSent = 0;
  readonly t0 = performance.now();
  setupMs = 0;

  static add(map: Record<string, number>, key: string): void {
    map[key] = (map[key] ?? 0) + 1;
  }

  answer(status: number, retryAfter: boolean): void {
    Tally.add(this.statusCounts, String(status));
    if (retryAfter) this.retryAfter++;
  }

  outcome(kind: FloodKind, planned: number, openAtEnd: number, inFlightAtEnd: number, durationMs: number, answerMs?: FloodOutcome['answerMs']): FloodOutcome {
    return {
      kind,
      planned,
      attempted: this.attempted,
      connected: this.connected,
      connectErrors: { ...this.connectErrors },
      requests: this.requests,
      statusCounts: { ...this.statusCounts },
      retryAfter: this.retryAfter,
      errors: { ...this.errors },
      closedByProxy: this.closedByProxy,
      openAtEnd,
      inFlightAtEnd,
      bytesSent: this.bytesSent,
      setupMs: this.setupMs,
      durationMs,
      ...(answerMs === undefined ? {} : { answerMs }),
    };
  }
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && code !== '' ? code : (err as Error).name || 'error';
}

/** Reads an answer's first bytes: its status and whether it carries Retry-After, once the head is complete. */
class HeadSniffer {
  #head = '';
  #done = false;
  status: number | null = null;
  retryAfter = false;

  /** Feeds a chunk; true when this chunk completed the head (the status is then known). */
  feed(chunk: Buffer): boolean {
    if (this.#done) return false;
    this.#head += chunk.toString('latin1', 0, Math.min(chunk.length, HEAD_SNIFF_BYTES));
    const end = this.#head.indexOf('\r\n\r\n');
    if (end === -1 && this.#head.length < HEAD_SNIFF_BYTES) return false;
    this.#done = true;
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(this.#head);
    this.status = m ? Number(m[1]) : 0;
    this.retryAfter = /\r\nretry-after:/i.test(end === -1 ? this.#head : this.#head.slice(0, end));
    return true;
  }
}

/** Opens `n` connections, at most CONNECT_CONCURRENCY at a time, handing each open one to `onOpen`. */
async function openConnections(target: FloodTarget, n: number, tally: Tally, stopped: () => boolean, onOpen: (socket: net.Socket, index: number) => void): Promise<void> {
  let next = 0;
  const one = (index: number): Promise<void> =>
    new Promise<void>((resolve) => {
      tally.attempted++;
      const socket = net.connect({ host: target.host, port: target.port, noDelay: true });
      const timer = setTimeout(() => {
        Tally.add(tally.connectErrors, 'ETIMEDOUT');
        socket.destroy();
        resolve();
      }, CONNECT_TIMEOUT_MS);
      socket.once('error', (err) => {
        clearTimeout(timer);
        Tally.add(tally.connectErrors, errorCode(err));
        resolve();
      });
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        if (stopped()) {
          socket.resetAndDestroy();
        } else {
          tally.connected++;
          onOpen(socket, index);
        }
        resolve();
      });
    });
  const lane = async (): Promise<void> => {
    while (next < n && !stopped()) await one(next++);
  };
  await Promise.all(Array.from({ length: Math.min(CONNECT_CONCURRENCY, n) }, lane));
}

/** Closes a socket with a reset (no TIME_WAIT left on the bench's side). */
function reset(socket: net.Socket): void {
  if (!socket.destroyed) socket.resetAndDestroy();
}

/**
 * A held connection's bookkeeping shared by idle and slowloris: an answer's status (an overloaded proxy may
 * answer 503 and close), the proxy closing the connection, and errors other than the close itself.
 */
function hold(socket: net.Socket, tally: Tally, open: Set<net.Socket>, stopping: () => boolean): void {
  open.add(socket);
  const sniff = new HeadSniffer();
  socket.on('data', (chunk: Buffer) => {
    if (sniff.feed(chunk) && sniff.status !== null) tally.answer(sniff.status, sniff.retryAfter);
  });
  socket.on('error', (err) => {
    const code = errorCode(err);
    if (!stopping() && code !== 'ECONNRESET' && code !== 'EPIPE') Tally.add(tally.errors, code);
  });
  socket.once('close', () => {
    open.delete(socket);
    if (!stopping()) tally.closedByProxy++;
  });
}

/** Connections opened and held, nothing sent on them. */
export function idleFlood(target: FloodTarget, n: number): Flood {
  const tally = new Tally();
  const open = new Set<net.Socket>();
  let stopping = false;
  const established = openConnections(target, n, tally, () => stopping, (s) => hold(s, tally, open, () => stopping)).then(() => {
    tally.setupMs = performance.now() - tally.t0;
  });
  return {
    kind: 'idle',
    established,
    finished: new Promise<void>(() => undefined),
    async stop() {
      stopping = true;
      await established;
      const openAtEnd = open.size;
      for (const s of open) reset(s);
      return tally.outcome('idle', n, openAtEnd, 0, performance.now() - tally.t0);
    },
  };
}

/** A request head that does not end within any run: a request line, a Host, then header after header. */
export function slowlorisHead(host: string, bytes = 65_536): Buffer {
  let head = `GET /?slowloris=1 HTTP/1.1\r\nHost: ${host}\r\n`;
  for (let i = 0; head.length < bytes; i++) head += `x-slowloris-${i}: ${i}\r\n`;
  return Buffer.from(head.slice(0, bytes), 'latin1');
}

/** Connections sending a never-ending head, one byte per connection every SLOWLORIS_INTERVAL_MS. */
export function slowlorisFlood(target: FloodTarget, n: number, host: string): Flood {
  const tally = new Tally();
  const open = new Set<net.Socket>();
  const head = slowlorisHead(host);
  const writers: { socket: net.Socket; at: number }[] = [];
  let stopping = false;
  let cursor = 0;
  // Every connection gets its next byte every interval: each tick writes to the share of them due now.
  const ticker = setInterval(() => {
    const due = Math.ceil((writers.length * SLOWLORIS_TICK_MS) / SLOWLORIS_INTERVAL_MS);
    for (let k = 0; k < due && writers.length > 0; k++) {
      cursor %= writers.length;
      const w = writers[cursor] as { socket: net.Socket; at: number };
      if (w.socket.destroyed || !w.socket.writable) {
        writers.splice(cursor, 1);
        continue;
      }
      w.socket.write(head.subarray(w.at % head.length, (w.at % head.length) + 1));
      w.at++;
      tally.bytesSent++;
      cursor++;
    }
  }, SLOWLORIS_TICK_MS);
  const established = openConnections(target, n, tally, () => stopping, (s) => {
    hold(s, tally, open, () => stopping);
    writers.push({ socket: s, at: 0 });
  }).then(() => {
    tally.setupMs = performance.now() - tally.t0;
  });
  return {
    kind: 'slowloris',
    established,
    finished: new Promise<void>(() => undefined),
    async stop() {
      stopping = true;
      clearInterval(ticker);
      await established;
      const openAtEnd = open.size;
      for (const s of open) reset(s);
      return tally.outcome('slowloris', n, openAtEnd, 0, performance.now() - tally.t0);
    },
  };
}

/** undici's own closes of its connections (idle timeout, the pool destroyed), not the proxy's. */
const OWN_CLOSES = new Set(['UND_ERR_INFO', 'UND_ERR_DESTROYED', 'UND_ERR_CLOSED', 'UND_ERR_ABORTED']);

/** An answer's Retry-After in milliseconds (seconds only; absent or unreadable: the 100 ms an error waits). */
export function retryAfterMs(value: string | string[] | undefined): number {
  const seconds = Number(Array.isArray(value) ? value[0] : value);
  return Number.isFinite(seconds) && seconds >= 0 ? Math.min(seconds, 60) * 1000 : 100;
}

function uploadError(err: unknown): string {
  const code = errorCode(err);
  if (code === 'UND_ERR_SOCKET' || code === 'ECONNRESET') return 'reset';
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'timeout';
  return code;
}

/**
 * `n` uploaders, each POSTing `bodyBytes` to one of `hosts` (spread evenly) with `?delay_ms=<delayMs>` (the demo
 * app answers that long after the whole body arrived), again and again until stopped.
 */
export function uploadFlood(url: string, n: number, hosts: readonly string[], bodyBytes: number, delayMs: number): Flood {
  floodTarget(url);
  const tally = new Tally();
  const body = Buffer.alloc(bodyBytes, 0x61);
  const pool = new Pool(url, { connections: n, pipelining: 1, headersTimeout: 120_000, bodyTimeout: 120_000, connect: { timeout: CONNECT_TIMEOUT_MS } });
  const abort = new AbortController();
  setMaxListeners(0, abort.signal); // one signal for every upload in flight
  let stopping = false;
  let inFlight = 0;
  pool.on('connect', () => {
    tally.attempted++;
    tally.connected++;
  });
  pool.on('connectionError', (_origin, _targets, err) => {
    tally.attempted++;
    Tally.add(tally.connectErrors, errorCode(err));
  });
  pool.on('disconnect', (_origin, _targets, err) => {
    if (!stopping && !OWN_CLOSES.has(errorCode(err))) tally.closedByProxy++;
  });
  const uploader = async (i: number): Promise<void> => {
    const host = hosts[i % hosts.length] as string;
    for (let k = 0; !stopping; k++) {
      tally.requests++;
      tally.bytesSent += bodyBytes;
      inFlight++;
      try {
        const res = await pool.request({
          path: `/upload?delay_ms=${delayMs}`,
          method: 'POST',
          headers: { host, 'content-type': 'application/octet-stream', 'x-request-id': `upload-${i}-${k}` },
          body,
          signal: abort.signal,
        });
        const retryAfter = res.headers['retry-after'];
        tally.answer(res.statusCode, retryAfter !== undefined);
        await res.body.dump();
        // Refused with Retry-After (the proxy shed the upload): the uploader waits as told, as an HTTP client that
        // honours it does, then sends again; without a wait it would be a connection flood, which (a) measures.
        if (res.statusCode >= 300 && !stopping) await sleep(retryAfterMs(retryAfter), undefined, { signal: abort.signal }).catch(() => undefined);
      } catch (err) {
        if (stopping) return;
        Tally.add(tally.errors, uploadError(err));
        await new Promise((r) => setTimeout(r, 100)); // a refused or reset upload: no busy loop
      } finally {
        inFlight--;
      }
    }
  };
  const loops = Array.from({ length: n }, (_, i) => uploader(i));
  return {
    kind: 'uploads',
    established: Promise.resolve(),
    finished: new Promise<void>(() => undefined),
    async stop() {
      const inFlightAtEnd = inFlight;
      stopping = true;
      abort.abort();
      await pool.destroy().catch(() => undefined);
      await Promise.allSettled(loops);
      const durationMs = performance.now() - tally.t0;
      return tally.outcome('uploads', n, 0, inFlightAtEnd, durationMs);
    },
  };
}

function coldFailure(err: unknown): string {
  const code = errorCode(err);
  return code === 'ECONNRESET' ? 'reset' : code;
}

/**
 * One GET per connection, each for a different one of `hosts` (suspended actors): every connection is opened
 * first, then every request written at once, so every miss reaches ext_proc together.
 */
export function coldStorm(target: FloodTarget, hosts: readonly string[]): Flood {
  const tally = new Tally();
  const n = hosts.length;
  const sockets: { socket: net.Socket; index: number }[] = [];
  const answerMs: number[] = [];
  let stopping = false;
  let pending = 0;
  let writtenAt = 0;
  let lastSettled = 0;
  let allSettled!: () => void;
  const finished = new Promise<void>((resolve) => (allSettled = resolve));
  const established = (async () => {
    await openConnections(target, n, tally, () => stopping, (socket, index) => {
      socket.on('error', () => undefined); // until its request is written
      sockets.push({ socket, index });
    });
    tally.setupMs = performance.now() - tally.t0;
    writtenAt = performance.now();
    for (const { socket, index } of sockets) {
      if (socket.destroyed) {
        Tally.add(tally.errors, 'closed before the request');
        continue;
      }
      const request = `GET /?cold=1 HTTP/1.1\r\nHost: ${hosts[index] as string}\r\nx-request-id: cold-${index}\r\nConnection: close\r\n\r\n`;
      pending++;
      tally.requests++;
      tally.bytesSent += request.length;
      const sniff = new HeadSniffer();
      let settled = false;
      const settle = (failure?: string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (failure !== undefined && !stopping) Tally.add(tally.errors, failure);
        lastSettled = performance.now();
        if (--pending === 0) allSettled();
      };
      const timer = setTimeout(() => {
        settle('timeout');
        reset(socket);
      }, COLD_DEADLINE_MS);
      socket.removeAllListeners('error');
      socket.on('data', (chunk: Buffer) => {
        if (!sniff.feed(chunk) || sniff.status === null) return;
        answerMs.push(performance.now() - writtenAt);
        tally.answer(sniff.status, sniff.retryAfter);
        settle();
      });
      socket.on('error', (err) => settle(coldFailure(err)));
      socket.once('close', () => settle(sniff.status === null ? 'closed' : undefined));
      socket.write(request);
    }
    if (pending === 0) allSettled();
  })();
  return {
    kind: 'cold',
    established,
    finished,
    async stop() {
      stopping = true;
      await established;
      const inFlightAtEnd = pending;
      let openAtEnd = 0;
      for (const { socket } of sockets) {
        if (!socket.destroyed) openAtEnd++;
        reset(socket);
      }
      const s = summarize(answerMs);
      const end = pending === 0 && lastSettled > 0 ? lastSettled : performance.now();
      return tally.outcome('cold', n, openAtEnd, inFlightAtEnd, end - tally.t0, answerMs.length ? { p50: s.p50Ms, p99: s.p99Ms, max: s.maxMs } : undefined);
    },
  };
}
