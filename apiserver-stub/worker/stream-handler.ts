/**
 * The worker tunnel's HTTP/2 (h2c) path: the same rule as for HTTP/1.1 (`request-handler.ts`) — the actor
 * `:authority` names must be active here, otherwise 421 + X-Ate-Assignment-Stale: true — then a gRPC call goes to
 * the actor's demo gRPC service (`demo-grpc.ts`). Anything else over HTTP/2 is answered 415: the actor's HTTP app
 * is reached over HTTP/1.1.
 */
import type { IncomingHttpHeaders, ServerHttp2Stream } from 'node:http2';
import { STALE_HEADER, STALE_HEADER_VALUE, STALE_STATUS } from '../../lib/wire-contract.js';
import type { ActivationTable } from './activations.js';
import { HostCache, MISDIRECTED_BODY } from './request-handler.js';
import { serveGrpc } from './demo-grpc.js';

export type StreamHandler = (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void;

const GRPC = /^application\/grpc($|[+;])/i;

export function createStreamHandler(workerIp: string, table: ActivationTable, actorSuffix: string): StreamHandler {
  const hosts = new HostCache(actorSuffix);
  return (stream, headers) => {
    stream.on('error', () => undefined); // a reset stream is the client's business
    const key = hosts.key(headers[':authority'] ?? headers.host);
    const activation = key === null ? undefined : table.get(key);
    if (activation === undefined) {
      table.misdirected++;
      stream.respond({ ':status': STALE_STATUS, 'content-type': 'text/plain', [STALE_HEADER]: STALE_HEADER_VALUE });
      stream.end(MISDIRECTED_BODY);
      return;
    }
    if (headers[':method'] !== 'POST' || !GRPC.test(String(headers['content-type'] ?? ''))) {
      stream.respond({ ':status': 415, 'content-type': 'text/plain' });
      stream.end('this worker serves gRPC over HTTP/2; other requests over HTTP/1.1\n');
      return;
    }
    const rawId = headers['x-request-id'];
    const requestId = typeof rawId === 'string' ? rawId : undefined;
    const seq = activation.deliver(requestId);
    activation.inflight.add(stream);
    stream.once('close', () => activation.inflight.delete(stream));
    serveGrpc(stream, String(headers[':path'] ?? ''), {
      atespace: activation.ref.atespace,
      actor: activation.ref.name,
      worker: workerIp,
      seq,
      requestId: requestId ?? null,
    });
  };
}
