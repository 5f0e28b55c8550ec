/**
 * The demo gRPC service every actor serves over h2c (`proto/demo/echo.proto`, `actoredge.demo.Echo`), written
 * directly on node:http2 streams: `Echo` answers the message with the actor, worker and request id that served
 * it; `Count` streams `count` replies `COUNT_INTERVAL_MS` apart; `Fail` answers the status code and message asked
 * for. Status and message always travel in trailers, after the response headers.
 */
import type { ServerHttp2Stream } from 'node:http2';
import { loadProto, lookup } from '../../lib/proto.js';
import { frame, readFrames } from './grpc-framing.js';
import type { DemoContext } from './demo-app.js';

export const ECHO_SERVICE = 'actoredge.demo.Echo';
export const COUNT_INTERVAL_MS = 5;
const MAX_COUNT = 1000;
const MAX_REQUEST_BYTES = 4 * 1024 * 1024;

/** gRPC status codes used here. */
export const GRPC_STATUS = { OK: 0, INVALID_ARGUMENT: 3, RESOURCE_EXHAUSTED: 8, UNIMPLEMENTED: 12, INTERNAL: 13 } as const;

interface MethodDefinition {
  readonly path: string;
  readonly requestDeserialize: (bytes: Buffer) => Record<string, unknown>;
  readonly responseSerialize: (value: Record<string, unknown>) => Buffer;
}

let methods: Map<string, MethodDefinition> | undefined;

/** `/actoredge.demo.Echo/Echo` → its definition (loaded on first use). */
function methodFor(path: string): MethodDefinition | undefined {
  if (methods === undefined) {
    const service = lookup<{ service: Record<string, MethodDefinition> }>(loadProto('demo/echo.proto'), ECHO_SERVICE).service;
    methods = new Map(Object.values(service).map((m) => [m.path, m]));
  }
  return methods.get(path);
}

type Reply = (message: Record<string, unknown>) => void;

/** Serves one gRPC call on `stream`, whose request headers the worker already checked. */
export function serveGrpc(stream: ServerHttp2Stream, path: string, ctx: DemoContext): void {
  const chunks: Buffer[] = [];
  let size = 0;
  stream.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= MAX_REQUEST_BYTES) chunks.push(chunk);
  });
  stream.once('end', () => {
    if (size > MAX_REQUEST_BYTES) return finish(stream, GRPC_STATUS.RESOURCE_EXHAUSTED, 'request too large');
    const method = methodFor(path);
    if (method === undefined) return finish(stream, GRPC_STATUS.UNIMPLEMENTED, `unknown method ${path}`);
    const frames = readFrames(Buffer.concat(chunks, size));
    if (frames.kind === 'bad') return finish(stream, GRPC_STATUS.INTERNAL, frames.reason);
    if (frames.messages.length !== 1) return finish(stream, GRPC_STATUS.UNIMPLEMENTED, 'exactly one request message expected');
    let request: Record<string, unknown>;
    try {
      request = method.requestDeserialize(frames.messages[0] as Buffer);
    } catch (err) {
      return finish(stream, GRPC_STATUS.INTERNAL, `bad request message: ${(err as Error).message}`);
    }
    if (stream.destroyed) return;
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    const reply: Reply = (message) => {
      if (!stream.destroyed) stream.write(frame(method.responseSerialize(message)));
    };
    const base = { atespace: ctx.atespace, actor: ctx.actor, worker: ctx.worker, request_id: ctx.requestId ?? '', seq: ctx.seq };
    const name = path.slice(path.lastIndexOf('/') + 1);
    if (name === 'Echo') {
      reply({ ...base, message: request.message });
      end(stream, GRPC_STATUS.OK, '');
    } else if (name === 'Count') {
      count(stream, reply, base, Math.min(Number(request.count), MAX_COUNT), String(request.message));
    } else {
      const code = Number(request.code);
      end(stream, code > 0 && code <= 16 ? code : GRPC_STATUS.INVALID_ARGUMENT, String(request.message));
    }
  });
}

function count(stream: ServerHttp2Stream, reply: Reply, base: Record<string, unknown>, n: number, message: string): void {
  let index = 0;
  const next = (): void => {
    if (stream.destroyed) return;
    if (index >= n) return end(stream, GRPC_STATUS.OK, '');
    reply({ ...base, message, index });
    index++;
    setTimeout(next, COUNT_INTERVAL_MS);
  };
  next();
}

/** Ends a response whose headers were sent: trailers carry the status. */
function end(stream: ServerHttp2Stream, code: number, message: string): void {
  if (stream.destroyed) return;
  stream.once('wantTrailers', () => stream.sendTrailers(statusTrailers(code, message)));
  stream.end();
}

/** A call that fails before any reply: response headers, then the status in trailers. */
function finish(stream: ServerHttp2Stream, code: number, message: string): void {
  if (stream.destroyed) return;
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  end(stream, code, message);
}

function statusTrailers(code: number, message: string): Record<string, string> {
  return message === '' ? { 'grpc-status': String(code) } : { 'grpc-status': String(code), 'grpc-message': encodeURIComponent(message) };
}
