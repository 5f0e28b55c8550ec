/**
 * One fuzz connection over HTTP/1.1: writes the given parts (each its own write, on its own turn of the event
 * loop), reads until every answer it waits for arrived or the connection ended, then, if told, half-closes and
 * reads until the proxy closes. Everything it received is returned with a strict reading of it
 * (`http1-answers.ts`); it never waits longer than `deadlineMs`.
 */
import net from 'node:net';
import tls from 'node:tls';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { readAnswers, type Http1Reading } from './http1-answers.js';

export interface Http1Outcome {
  readonly bytes: Buffer;
  readonly reading: Http1Reading;
  /** The proxy ended the connection (or it broke). */
  readonly closed: boolean;
  /** Why the wait ended without the answers or the close it waited for; undefined when it did not. */
  readonly stuck: string | undefined;
  /** The connection could not be made. */
  readonly connectError: string | undefined;
}

export interface Http1Send {
  readonly address: string;
  readonly tls: boolean;
  readonly parts: readonly Buffer[];
  /** The method of each request sent (how to read each answer's body). */
  readonly methods: readonly string[];
  /** How many answers to wait for before `halfClose` (or before giving up on the connection). */
  readonly expected: number;
  /** After the expected answers: half-close and wait for the proxy to close. */
  readonly halfClose: boolean;
  readonly deadlineMs: number;
}

function connect(address: string, secure: boolean): Promise<net.Socket> {
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i);
  const port = Number(address.slice(i + 1));
  return new Promise((resolve, reject) => {
    const socket = secure ? tls.connect({ host, port, ALPNProtocols: ['http/1.1'], rejectUnauthorized: false }) : net.connect(port, host);
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

export async function sendHttp1(s: Http1Send): Promise<Http1Outcome> {
  let socket: net.Socket;
  try {
    socket = await connect(s.address, s.tls);
  } catch (err) {
    return { bytes: Buffer.alloc(0), reading: readAnswers(Buffer.alloc(0), s.methods, true), closed: true, stuck: undefined, connectError: (err as Error).message };
  }
  socket.setNoDelay(true);
  const chunks: Buffer[] = [];
  let closed = false;
  let wake: (() => void) | undefined;
  const poke = (): void => wake?.();
  socket.on('data', (c: Buffer) => {
    chunks.push(c);
    poke();
  });
  socket.on('error', () => undefined);
  socket.on('close', () => {
    closed = true;
    poke();
  });
  const deadline = Date.now() + s.deadlineMs;
  const read = (): Http1Reading => readAnswers(Buffer.concat(chunks), s.methods, closed);
  /** Waits until `done` holds or the deadline passes; false on the deadline. */
  const until = async (done: () => boolean): Promise<boolean> => {
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
    return true;
  };
  try {
    for (const part of s.parts) {
      if (closed) break;
      socket.write(part);
      await nextTurn();
    }
    const answered = (): boolean => {
      if (closed) return true;
      const r = read();
      return r.problem !== undefined || r.tunnel || r.answers.length >= s.expected || r.answers.some((a) => a.headers.some(([n, v]) => n === 'connection' && /close/i.test(v)));
    };
    let stuck: string | undefined;
    if (!(await until(answered))) stuck = `${read().answers.length} of ${s.expected} answer(s) and no close`;
    else if (s.halfClose && !closed) {
      socket.end();
      if (!(await until(() => closed))) stuck = 'no close after the client half-closed';
    }
    return { bytes: Buffer.concat(chunks), reading: read(), closed, stuck, connectError: undefined };
  } finally {
    socket.destroy();
  }
}

/** Splits `bytes` at the given fractions of its length (sorted, duplicates and empty parts dropped). */
export function splitAt(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => Math.floor(c * bytes.length)))].filter((p) => p > 0 && p < bytes.length).sort((a, b) => a - b);
  const parts: Buffer[] = [];
  let from = 0;
  for (const p of points) {
    parts.push(bytes.subarray(from, p));
    from = p;
  }
  parts.push(bytes.subarray(from));
  return parts;
}
