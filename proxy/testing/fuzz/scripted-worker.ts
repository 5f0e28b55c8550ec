/**
 * A worker that answers with exactly the bytes a test scripts: a raw TCP listener on loopback that reads each
 * request strictly (`http1-requests.ts`), records it, and writes the scripted answer for the n-th request it
 * received — a whole answer, a malformed one, or the first k bytes of one followed by a close. A request it cannot
 * read is recorded as a problem (the proxy must send well-formed requests).
 */
import net from 'node:net';
import { boundAddress } from '../../../lib/address.js';
import { RequestReader, type ReadRequest } from './http1-requests.js';

export interface WorkerReply {
  readonly bytes: Buffer;
  /** Write only this many bytes of it, then close (undefined: all of them). */
  readonly cutAt?: number | undefined;
  /** Close the connection after the reply (else keep it for the next request). */
  readonly close: boolean;
}

/** The reply to the `index`-th request this worker received (0-based, across connections). */
export type WorkerScript = (request: ReadRequest, index: number) => WorkerReply;

export interface Received {
  readonly at: string;
  readonly request: ReadRequest;
}

export class ScriptedWorker {
  script: WorkerScript = () => ({ bytes: Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n'), close: false });
  readonly #received: Received[] = [];
  readonly #problems: string[] = [];
  readonly #sockets = new Set<net.Socket>();
  #count = 0;

  private constructor(
    private readonly server: net.Server,
    readonly address: string,
  ) {
    server.on('connection', (socket) => this.#serve(socket));
  }

  static async start(): Promise<ScriptedWorker> {
    const server = net.createServer({ noDelay: true });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new ScriptedWorker(server, boundAddress(server));
  }

  /** The requests received since the last call, and forgets them. */
  take(): Received[] {
    return this.#received.splice(0);
  }

  /** Requests that could not be read since the last call, and forgets them. */
  takeProblems(): string[] {
    return this.#problems.splice(0);
  }

  /** Starts counting requests from 0 again (a new case) and closes every open connection. */
  reset(): void {
    this.#count = 0;
    for (const s of this.#sockets) s.destroy();
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  #serve(socket: net.Socket): void {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    socket.on('error', () => undefined);
    const reader = new RequestReader();
    const at = this.address;
    socket.on('data', (chunk: Buffer) => {
      for (const request of reader.push(chunk)) {
        this.#received.push({ at, request });
        if (socket.destroyed || socket.writableEnded) return;
        const reply = this.script(request, this.#count++);
        if (reply.cutAt !== undefined && reply.cutAt < reply.bytes.length) {
          socket.end(reply.bytes.subarray(0, reply.cutAt));
          return;
        }
        if (reply.close) socket.end(reply.bytes);
        else socket.write(reply.bytes);
      }
      if (reader.problem !== undefined) {
        this.#problems.push(`the worker could not read a request: ${reader.problem}`);
        socket.destroy();
      }
    });
  }
}
