/**
 * Upstream response headers as relayed to the client: hop-by-hop headers (`hop-by-hop.ts`: the RFC 9110 list,
 * Connection and every header it names) removed, and the worker's stale signal (`x-ate-assignment-stale`) never
 * relayed. Names keep their case; values pass through byte for byte.
 */
import { STALE_HEADER } from '../../lib/wire-contract.js';
import { HOP_BY_HOP, removeNamedByConnection } from './hop-by-hop.js';

/** Response headers never relayed: hop-by-hop, and the stale signal. */
const RESPONSE_DROP: ReadonlySet<string> = new Set([...HOP_BY_HOP, STALE_HEADER]);

/** Headers an upstream's Connection header cannot remove: the body is framed by it. */
const RESPONSE_KEEP: ReadonlySet<string> = new Set(['content-length']);

/** Lengths of the names in RESPONSE_DROP: any other name is relayed without lower-casing it first. */
const DROP_LENGTHS: ReadonlySet<number> = new Set([...RESPONSE_DROP].map((n) => n.length));

/** The headers to relay, from undici's raw response headers, as node's flat `[name, value, ...]` (latin1). */
export function relayHeaders(raw: readonly Buffer[]): string[] {
  const out: string[] = [];
  let connection: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = (raw[i] as Buffer).toString('latin1');
    if (DROP_LENGTHS.has(name.length)) {
      const lower = name.toLowerCase();
      if (RESPONSE_DROP.has(lower)) {
        if (lower === 'connection') {
          // Repeated Connection fields are one list (RFC 9110 §5.3): every one's names go.
          const value = (raw[i + 1] as Buffer).toString('latin1');
          connection = connection === undefined ? value : `${connection},${value}`;
        }
        continue;
      }
    }
    out.push(name, (raw[i + 1] as Buffer).toString('latin1'));
  }
  if (connection !== undefined) removeNamedByConnection(out, connection, RESPONSE_KEEP);
  return out;
}
