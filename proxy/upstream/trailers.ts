/**
 * Response trailers, relayed from the worker to the client. A worker's HTTP/1.1 chunked trailers are added to the
 * client response (node's `addTrailers`) when the upstream body is complete; the worker's `Trailer` header, which
 * announces them, is relayed only when the client response is itself chunked and so can carry trailers (node
 * refuses a `Trailer` header on any other response: HEAD, 204, 304, a `Content-Length` body, an HTTP/1.0 client
 * that did not ask for chunked). Trailer fields that frame, route or describe a connection (`hop-by-hop.ts`,
 * Content-Length, Host) and the stale signal are never relayed.
 */
import type { ServerResponse } from 'node:http';
import { HOP_BY_HOP } from '../edge/hop-by-hop.js';
import { STALE_HEADER } from './outcome.js';

const TRAILER = 'trailer';
const CONTENT_LENGTH = 'content-length';

/** Trailer fields never relayed. */
const TRAILER_DROP: ReadonlySet<string> = new Set([...HOP_BY_HOP, STALE_HEADER, CONTENT_LENGTH, 'host']);

/** Trailers as undici reports them: raw `[name, value, ...]` from HTTP/1.1, a header object from HTTP/2. */
export type UpstreamTrailers = readonly (Buffer | string)[] | Readonly<Record<string, string | string[] | undefined>> | null;

/** The trailers as a flat `[name, value, ...]` list (null: none). */
export function trailerList(trailers: UpstreamTrailers): readonly (Buffer | string)[] | null {
  if (trailers === null || Array.isArray(trailers)) return trailers as readonly (Buffer | string)[] | null;
  const out: string[] = [];
  for (const [name, value] of Object.entries(trailers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) out.push(name, v);
    else out.push(name, value as string);
  }
  return out;
}

/** Relayed trailer pairs as an HTTP/2 header object (lower-case names; repeated fields joined with `, `). */
export function trailerObject(pairs: readonly [string, string][]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of pairs) {
    const lower = name.toLowerCase();
    const prev = out[lower];
    out[lower] = prev === undefined ? value : `${prev}, ${value}`;
  }
  return out;
}

function text(b: Buffer | string): string {
  return typeof b === 'string' ? b : b.toString('latin1');
}

/** The worker's `Trailer` header values (comma-joined), from undici's raw response headers; undefined when none. */
export function declaredTrailer(raw: readonly Buffer[]): string | undefined {
  let value: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] as Buffer;
    if (name.length !== TRAILER.length || name.toString('latin1').toLowerCase() !== TRAILER) continue;
    const v = (raw[i + 1] as Buffer).toString('latin1');
    value = value === undefined ? v : `${value}, ${v}`;
  }
  return value;
}

/**
 * True when node will send `res` chunked, given the status and the headers about to be written: only then can it
 * carry trailers (node's own rule in `OutgoingMessage#_storeHeader`).
 */
export function canCarryTrailers(res: ServerResponse, method: string, status: number, headers: readonly string[]): boolean {
  if (!res.useChunkedEncodingByDefault || method === 'HEAD' || status === 204 || status === 304 || status < 200) return false;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i] as string;
    if (name.length === CONTENT_LENGTH.length && name.toLowerCase() === CONTENT_LENGTH) return false;
  }
  return true;
}

/** The trailer fields to relay, from undici's raw trailers, as `[name, value]` pairs (names keep their case). */
export function relayTrailers(raw: readonly (Buffer | string)[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = text(raw[i] as Buffer | string);
    if (TRAILER_DROP.has(name.toLowerCase())) continue;
    out.push([name, text(raw[i + 1] as Buffer | string)]);
  }
  return out;
}
