/**
 * Which protocol a request goes upstream with. gRPC — an HTTP/2 client's POST whose content-type is
 * `application/grpc`, `application/grpc+<codec>` or `application/grpc;<params>` — goes as HTTP/2 with prior
 * knowledge (h2c), so trailers and streaming stay end to end; everything else goes as HTTP/1.1, whatever the
 * client spoke (an HTTP/1.1-only actor is reached by an HTTP/2 client).
 */
import type { ProxyRequest } from '../request/context.js';

export type UpstreamProtocol = 'http/1.1' | 'h2c';

const GRPC = 'application/grpc';

/** True for `application/grpc`, `application/grpc+...` and `application/grpc;...` (case-insensitive). */
export function isGrpcContentType(value: string | undefined): boolean {
  if (value === undefined || value.length < GRPC.length) return false;
  if (value.slice(0, GRPC.length).toLowerCase() !== GRPC) return false;
  const next = value.charAt(GRPC.length);
  return next === '' || next === '+' || next === ';';
}

export function upstreamProtocol(ctx: ProxyRequest): UpstreamProtocol {
  if (ctx.protocol !== 'h2' || ctx.method !== 'POST') return 'http/1.1';
  return isGrpcContentType(ctx.headers.get('content-type')) ? 'h2c' : 'http/1.1';
}
