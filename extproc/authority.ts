/** Reads the request authority from an ext_proc HttpHeaders message: `:authority`, else `host`. */
import type { HeaderValue, HttpHeaders } from './protocol.js';

/** A header's value: `raw_value` (what Envoy >= 1.27 sends), falling back to `value` (older data planes). */
export function headerValue(header: HeaderValue): string {
  const raw = header.raw_value;
  if (raw && raw.length > 0) return Buffer.isBuffer(raw) ? raw.toString('utf8') : Buffer.from(raw).toString('utf8');
  return header.value ?? '';
}

/** The `:authority` value, else `host`, else the empty string. Header names are compared case-insensitively. */
export function authorityOf(headers: HttpHeaders | undefined): string {
  const list = headers?.headers?.headers;
  if (!list) return '';
  let host: HeaderValue | undefined;
  for (const h of list) {
    const key = h.key;
    if (key === ':authority') return headerValue(h);
    if (host === undefined && key.length === 4 && key.toLowerCase() === 'host') host = h;
  }
  return host ? headerValue(host) : '';
}
