/**
 * The server span of a request, upgrade or tunnel, as the lifecycle starts it at the head (`startRequestTrace`:
 * the parent from the client's W3C `traceparent` / `tracestate`, the request's attributes in the OpenTelemetry
 * HTTP semantic conventions) and ends it once the request is finished (`endRequestTrace`: the status, the request
 * id, the actor, the worker, the attempts, the cache outcome the stages report). Only ever called with tracing on.
 * The query string is not recorded (it may carry credentials).
 */
import type { Attributes, Tracer } from '@opentelemetry/api';
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_NETWORK_PEER_ADDRESS,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '../../lib/tracing/semconv.js';
import { parseActorHost } from '../../lib/actor-ref.js';
import {
  ATTR_ACTOR,
  ATTR_ATESPACE,
  ATTR_ATTEMPTS,
  ATTR_ERROR_CODE,
  ATTR_REQUEST_ID,
  ATTR_ROUTE_SOURCE,
  ATTR_TUNNEL_BYTES_FROM_CLIENT,
  ATTR_TUNNEL_BYTES_TO_CLIENT,
  ATTR_UPGRADE,
  ATTR_WORKER,
} from '../../lib/tracing/attributes.js';
import { extractParent } from '../../lib/tracing/propagation.js';
import type { ProxyRequest } from '../request/context.js';
import { RequestTrace } from '../request/trace.js';

/** The request's trace, its parent taken from the client's trace context (a new trace when it sent none). */
export function startRequestTrace(tracer: Tracer, ctx: ProxyRequest): RequestTrace {
  const headers = ctx.headers;
  const t = new RequestTrace(tracer, ctx.method, extractParent((name) => headers.get(name)));
  if (!t.recording) return t;
  const attributes: Attributes = {
    [ATTR_HTTP_REQUEST_METHOD]: ctx.method,
    [ATTR_URL_SCHEME]: ctx.scheme,
    [ATTR_URL_PATH]: pathOnly(ctx.path),
    [ATTR_CLIENT_ADDRESS]: ctx.remoteAddress,
    [ATTR_NETWORK_PEER_ADDRESS]: ctx.remoteAddress,
    [ATTR_NETWORK_PROTOCOL_VERSION]: ctx.protocol === 'h2' ? '2' : ctx.exchange.connectionInfo.httpVersion === '1.0' ? '1.0' : '1.1',
    [ATTR_REQUEST_ID]: ctx.requestId,
  };
  const authority = /^(\[[^\]]*\]|[^:]*)(?::(\d{1,5}))?$/.exec(ctx.authority);
  if (authority !== null && authority[1] !== '') attributes[ATTR_SERVER_ADDRESS] = authority[1] as string;
  if (authority?.[2] !== undefined) attributes[ATTR_SERVER_PORT] = Number(authority[2]);
  const agent = headers.get('user-agent');
  if (agent !== undefined) attributes[ATTR_USER_AGENT_ORIGINAL] = agent;
  t.server.setAttributes(attributes);
  return t;
}

function pathOnly(path: string): string {
  const q = path.indexOf('?');
  return q === -1 ? path : path.slice(0, q);
}

/**
 * Ends the request's spans. `stage`: what the built-in stages say about it (the cache outcome); `actorSuffix`
 * names the actor and atespace from the authority.
 */
export function endRequestTrace(t: RequestTrace, ctx: ProxyRequest, status: number, actorSuffix: string, stage: Attributes | undefined): void {
  if (!t.recording) return t.end({}, undefined);
  const attributes: Attributes = {
    ...stage,
    [ATTR_HTTP_RESPONSE_STATUS_CODE]: status,
    [ATTR_ATTEMPTS]: ctx.attempt + 1,
  };
  const parsed = parseActorHost(ctx.authority, actorSuffix);
  if (parsed.kind === 'ok') {
    attributes[ATTR_ACTOR] = parsed.actor.ref.name;
    attributes[ATTR_ATESPACE] = parsed.actor.ref.atespace;
  }
  if (ctx.upstreamAddress !== undefined) attributes[ATTR_WORKER] = ctx.upstreamAddress;
  if (ctx.route !== undefined) attributes[ATTR_ROUTE_SOURCE] = ctx.route.source;
  if (ctx.upgrade !== undefined) attributes[ATTR_UPGRADE] = ctx.upgrade.token;
  const tunnel = ctx.tunnel;
  if (tunnel !== undefined) {
    const bytes = tunnel.bytes();
    attributes[ATTR_TUNNEL_BYTES_FROM_CLIENT] = bytes.fromClient;
    attributes[ATTR_TUNNEL_BYTES_TO_CLIENT] = bytes.toClient;
  }
  const code = ctx.error?.code;
  if (code !== undefined) attributes[ATTR_ERROR_CODE] = code;
  // A server span is an error for a 5xx only (a 4xx is the client's): error.type names it.
  const error = status >= 500 ? (code ?? String(status)) : undefined;
  if (error !== undefined) attributes['error.type'] = error;
  t.end(attributes, error);
}
