/**
 * Test helper: a real WebSocket client (`ws`) through the proxy's ingress to an actor, and its echo answers.
 */
import type { IncomingHttpHeaders } from 'node:http';
import WebSocket from 'ws';
import { hostOf } from './stack.js';

export interface Echo {
  readonly atespace: string;
  readonly actor: string;
  readonly worker: string;
  readonly seq: number;
  readonly data: string;
}

/** Why a handshake did not open: the proxy's (or worker's) answer. */
export class HandshakeRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`handshake answered ${status}: ${body}`);
  }
}

/**
 * Opens a WebSocket to `actor` through `ingress` (`http://host:port`), with `headers` on the handshake; rejects
 * with HandshakeRefused on a non-101.
 */
export function openSocket(ingress: string, actor: string, path = '/ws', headers: Readonly<Record<string, string>> = {}): Promise<EchoSocket> {
  const ws = new WebSocket(`${ingress.replace(/^http/, 'ws')}${path}`, { headers: { host: hostOf(actor), ...headers }, perMessageDeflate: false });
  let handshake: IncomingHttpHeaders = {};
  ws.once('upgrade', (res) => (handshake = res.headers));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(new EchoSocket(ws, handshake)));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => reject(new HandshakeRefused(res.statusCode ?? 0, body)));
      res.on('error', () => reject(new HandshakeRefused(res.statusCode ?? 0, body)));
    });
    ws.once('error', reject);
  });
}

export class EchoSocket {
  readonly #waiting: ((e: Echo) => void)[] = [];
  readonly #received: Echo[] = [];
  /** Resolves with the close code once the socket closed (either side). */
  readonly closed: Promise<number>;

  constructor(
    readonly ws: WebSocket,
    /** The headers of the 101 the handshake was answered with. */
    readonly handshake: IncomingHttpHeaders = {},
  ) {
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const echo = JSON.parse(data.toString()) as Echo;
      const w = this.#waiting.shift();
      if (w !== undefined) w(echo);
      else this.#received.push(echo);
    });
    ws.on('error', () => undefined);
    this.closed = new Promise((resolve) => ws.once('close', (code) => resolve(code)));
  }

  /** Sends `text` and resolves with the next echo. */
  echo(text: string): Promise<Echo> {
    const next = this.#received.shift();
    const answer = next !== undefined ? Promise.resolve(next) : new Promise<Echo>((resolve) => this.#waiting.push(resolve));
    this.ws.send(text);
    return answer;
  }

  close(): Promise<number> {
    this.ws.close();
    return this.closed;
  }
}
