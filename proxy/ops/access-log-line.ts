/**
 * The access-log line of a finished request, upgrade or tunnel (`msg: "access"`): every field always present, in
 * the documented order (docs/operating.md), then the fields the built-in stages add (`cache`, `extprocMs`). The
 * request lifecycle (`edge/lifecycle.ts`) calls it once per request, when the request is over; `access-log.ts`
 * writes the line. It reads the request through `FinishedRequest`, the fields the line needs, and nothing else.
 */
import { performance } from 'node:perf_hooks';
import type { ClientProtocol } from '../api/filter.js';
import type { ConnectionInfo } from '../http/exchange.js';

/** The tunnel a request became, as the line reports it. */
export interface LoggedTunnel {
  readonly kind: 'upgrade' | 'connect';
  /** `performance.now()` when the tunnel opened. */
  readonly openedAt: number;
  /** Why it closed (undefined while open). */
  readonly reason: string | undefined;
  bytes(): { readonly fromClient: number; readonly toClient: number };
}

/** What the line reads from a finished request. */
export interface FinishedRequest {
  readonly requestId: string;
  readonly trace: { readonly traceId: string } | undefined;
  readonly remoteAddress: string;
  readonly method: string;
  readonly authority: string;
  readonly path: string;
  readonly protocol: ClientProtocol;
  readonly body: { readonly receivedBytes: number } | null;
  readonly bytesOut: number;
  readonly upstreamAddress: string | undefined;
  readonly upstreamMs: number | undefined;
  /** 0 for the first attempt. */
  readonly attempt: number;
  readonly route: { readonly source: string } | undefined;
  readonly headers: { get(name: string): string | undefined };
  readonly exchange: { readonly encrypted: boolean; readonly connectionInfo: ConnectionInfo };
  readonly upgrade: { readonly token: string } | undefined;
  readonly tunnel: LoggedTunnel | undefined;
  readonly error: { readonly code: string } | undefined;
  readonly details: string | undefined;
}

/** Fields of a request's access-log line that a built-in stage adds. */
export type LogFields<R> = (req: R) => Readonly<Record<string, unknown>> | undefined;

/** How a request ended, as the lifecycle decided it. */
export interface RequestEnd {
  readonly status: number;
  /** The response was cut short (the client saw a reset or an incomplete body). */
  readonly truncated: boolean;
  /** From the request's head to its end. */
  readonly durationMs: number;
}

/** The access-log line of a finished request (`stageFields` fill in the fields the built-in stages own). */
export function accessLine<R extends FinishedRequest>(req: R, end: RequestEnd, stageFields: readonly LogFields<R>[]): Record<string, unknown> {
  const tunnel = req.tunnel;
  let tunnelFields: Record<string, unknown> | null = null;
  if (tunnel !== undefined) {
    const bytes = tunnel.bytes();
    tunnelFields = {
      kind: tunnel.kind,
      durationMs: Math.round(performance.now() - tunnel.openedAt),
      bytesFromClient: bytes.fromClient,
      bytesToClient: bytes.toClient,
      closedBy: tunnel.reason ?? null,
    };
  }
  const tls = req.exchange.encrypted ? req.exchange.connectionInfo : undefined;
  const line: Record<string, unknown> = {
    msg: 'access',
    time: new Date().toISOString(),
    pid: process.pid,
    requestId: req.requestId,
    traceId: req.trace?.traceId ?? null,
    client: req.remoteAddress,
    method: req.method,
    authority: req.authority,
    path: req.path,
    protocol: req.protocol,
    status: end.status,
    durationMs: round3(end.durationMs),
    bytesIn: req.body?.receivedBytes ?? 0,
    bytesOut: req.bytesOut,
    upstream: req.upstreamAddress ?? null,
    upstreamMs: req.upstreamMs === undefined ? null : round3(req.upstreamMs),
    attempts: req.attempt + 1,
    routeSource: req.route?.source ?? null,
    cache: null,
    extprocMs: null,
    userAgent: req.headers.get('user-agent') ?? null,
    tls: tls === undefined ? null : { version: tls.tlsVersion ?? null, sni: tls.serverName ?? null },
    upgrade: req.upgrade?.token ?? null,
    tunnel: tunnelFields,
    error: req.error?.code ?? null,
    details: req.details ?? null,
    aborted: end.truncated,
  };
  for (const fields of stageFields) {
    const extra = fields(req);
    if (extra !== undefined) Object.assign(line, extra);
  }
  return line;
}

function round3(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
