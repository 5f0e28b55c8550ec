/**
 * Response trailers, relayed from the worker to the client when the upstream body is complete; the worker's
 * `Trailer` header, which announces them, is relayed only when the client exchange can carry trailers after that
 * head (`DownstreamExchange.trailersAllowed`). Trailer fields that frame, route or describe a connection (`hop-by-hop.ts`,
 * Content-Length, Host) and the stale signal are never relayed.
 */
import { STALE_HEADER } from '../../lib/wire-contract.js';
import { HOP_BY_HOP } from './hop-by-hop.js';
import type { TrailerPairs } from './exchange.js';

const TRAILER = 'trailer';

/** Trailer fields never relayed. */
const TRAILER_DROP: ReadonlySet<string> = new Set([...HOP_BY_HOP, STALE_HEADER, 'content-length', 'host']);

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
export function trailerObject(pairs: TrailerPairs): Record<string, string> {
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

/** The trailer fields to relay, from undici's raw trailers, as `[name, value]` pairs (names keep their case). */
export function relayTrailers(raw: readonly (Buffer | string)[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = text(raw[i] as Buffer | string);
    // A pseudo-header is never a trailer (RFC 9113 §8.1): an HTTP/2 peer would refuse the whole trailer block.
    if (name.charCodeAt(0) === 58 /* ':' */ || TRAILER_DROP.has(name.toLowerCase())) continue;
    out.push([name, text(raw[i + 1] as Buffer | string)]);
  }
  return out;
}
