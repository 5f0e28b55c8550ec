/**
 * Clients of the egress listener for tests: a raw HTTP/1.1 request over TLS (a CONNECT, or any method), whose
 * answer is read as bytes; an HTTP/2 session with the actor's credentials and CONNECT streams on it; and the
 * destinations tunnels reach (an echo server, a port that refuses).
 */
import http2, { type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import net, { type AddressInfo } from 'node:net';
import { once } from 'node:events';
import tls, { type TLSSocket } from 'node:tls';
import type { ClientCredentials } from './egress-pki.js';

export interface EgressTarget {
  readonly host: string;
  readonly port: number;
  /** The listener's CA. */
  readonly ca: string;
}

/** An HTTP/1.1 answer: status, head, and (not 200) its body read to the end; 200: the open socket and bytes past the head. */
export interface H1Answer {
  readonly status: number;
  readonly head: string;
  readonly body: string;
  readonly socket: TLSSocket;
}

/** The TCP connection under each TLS client connection (to reset it: `resetAndDestroy`). */
const RAW = new WeakMap<TLSSocket, net.Socket>();

/** Resets the TCP connection under `socket` (RST, not a TLS close). */
export function resetConnection(socket: TLSSocket): void {
  (RAW.get(socket) ?? socket).resetAndDestroy();
}

export function tlsConnect(target: EgressTarget, creds: ClientCredentials | undefined, alpn: readonly string[] = ['http/1.1']): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const raw = net.connect({ host: target.host, port: target.port });
    raw.on('error', () => undefined);
    const socket = tls.connect({
      socket: raw,
      ca: target.ca,
      servername: 'localhost',
      ALPNProtocols: [...alpn],
      ...(creds === undefined ? {} : { cert: creds.cert, key: creds.key }),
    });
    RAW.set(socket, raw);
    socket.once('secureConnect', () => {
      socket.on('error', () => undefined); // a reset is what some tests do; what they check is the proxy's side
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Sends `request` (a whole head) on a fresh TLS connection and reads the answer. */
export async function h1Request(target: EgressTarget, creds: ClientCredentials | undefined, request: string | Buffer): Promise<H1Answer> {
  const socket = await tlsConnect(target, creds);
  socket.on('error', () => undefined);
  socket.write(request);
  return readAnswer(socket);
}

/** `CONNECT <authority> HTTP/1.1` on a fresh TLS connection. */
export function h1Connect(target: EgressTarget, creds: ClientCredentials | undefined, authority: string): Promise<H1Answer> {
  return h1Request(target, creds, `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
}

function readAnswer(socket: TLSSocket): Promise<H1Answer> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    let head: string | undefined;
    let status = 0;
    const done = (): void => {
      socket.off('data', onData);
      if (head === undefined) return reject(new Error(`the connection ended before an answer (${JSON.stringify(buf.toString('latin1'))})`));
      resolve({ status, head, body: buf.toString('utf8'), socket });
    };
    const onData = (chunk: Buffer): void => {
      buf = Buffer.concat([buf, chunk]);
      if (head !== undefined) return;
      const end = buf.indexOf('\r\n\r\n');
      if (end === -1) return;
      head = buf.subarray(0, end).toString('latin1');
      status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      buf = buf.subarray(end + 4);
      if (status === 200) {
        socket.off('data', onData);
        socket.off('end', done);
        socket.off('close', done);
        if (buf.length > 0) socket.unshift(buf);
        resolve({ status, head, body: '', socket });
      }
    };
    socket.on('data', onData);
    socket.once('end', done);
    socket.once('close', done);
  });
}

/** Reads from `stream` until `expected` bytes arrived (or it ended); the text. */
export function readBytes(stream: NodeJS.ReadableStream, expected: number): Promise<string> {
  return new Promise((resolve) => {
    let got = '';
    const finish = (): void => {
      stream.off('data', onData);
      resolve(got);
    };
    const onData = (chunk: Buffer | string): void => {
      got += chunk.toString();
      if (got.length >= expected) finish();
    };
    stream.on('data', onData);
    stream.once('end', finish);
    stream.once('close', finish);
  });
}

export async function h2Session(target: EgressTarget, creds: ClientCredentials | undefined): Promise<ClientHttp2Session> {
  const session = http2.connect(`https://localhost:${target.port}`, {
    ca: target.ca,
    ...(creds === undefined ? {} : { cert: creds.cert, key: creds.key }),
    createConnection: () =>
      tls.connect({
        host: target.host,
        port: target.port,
        ca: target.ca,
        servername: 'localhost',
        ALPNProtocols: ['h2'],
        ...(creds === undefined ? {} : { cert: creds.cert, key: creds.key }),
      }),
  });
  session.on('error', () => undefined);
  await once(session, 'connect');
  return session;
}

export interface H2Answer {
  readonly status: number;
  readonly stream: ClientHttp2Stream;
  /** Not 200: the body read to its end. */
  readonly body: string;
}

/** A stream with `headers` (a CONNECT: `:method CONNECT` and `:authority`), its status and, not 200, its body. */
export async function h2Stream(session: ClientHttp2Session, headers: http2.OutgoingHttpHeaders, opts: { readonly endStream?: boolean } = {}): Promise<H2Answer> {
  const stream = session.request(headers, { endStream: opts.endStream ?? false });
  stream.on('error', () => undefined);
  const status = await new Promise<number>((resolve, reject) => {
    stream.once('response', (h) => resolve(Number(h[':status'])));
    stream.once('close', () => reject(new Error(`stream closed without an answer (code ${stream.rstCode})`)));
  });
  if (status === 200) return { status, stream, body: '' };
  let body = '';
  stream.setEncoding('utf8');
  stream.on('data', (c: string) => (body += c));
  await once(stream, 'end').catch(() => undefined);
  return { status, stream, body };
}

export function h2Connect(session: ClientHttp2Session, authority: string): Promise<H2Answer> {
  return h2Stream(session, { ':method': 'CONNECT', ':authority': authority });
}

export interface Destination {
  readonly address: string;
  /** Connections accepted so far. */
  readonly accepted: net.Socket[];
  close(): Promise<void>;
}

/** A TCP server on 127.0.0.1:0 that echoes what it receives, half-close included. */
export async function startEcho(): Promise<Destination> {
  const accepted: net.Socket[] = [];
  const server = net.createServer({ allowHalfOpen: true }, (socket) => {
    accepted.push(socket);
    socket.on('error', () => undefined);
    socket.pipe(socket);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    accepted,
    close: () => {
      for (const s of accepted) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback port nothing listens on (bound, then released). */
export async function refusingPort(): Promise<string> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `127.0.0.1:${port}`;
}
