/**
 * Envoy's `request_attributes`: the attributes (Envoy's attribute vocabulary) the proxy can evaluate when the
 * request headers are in, sent on the first message of the stream as `attributes["envoy.filters.http.ext_proc"]`.
 * TLS attributes do not exist on a plaintext listener; `request.size`, `request.total_size` and
 * `request.duration` are not known at that point; `response.*` attributes are not supported.
 */
import type { ProxyRequest } from '../../request/context.js';
import { structOf, type StructMessage, type StructValue } from './messages.js';

/** The key Envoy uses in `ProcessingRequest.attributes` (its filter name). */
export const ATTRIBUTES_KEY = 'envoy.filters.http.ext_proc';

type Evaluate = (ctx: ProxyRequest) => StructValue | undefined;

const text = (v: string | undefined): StructValue | undefined => (v === undefined ? undefined : { kind: 'stringValue', stringValue: v });
const num = (v: number | undefined): StructValue | undefined => (v === undefined ? undefined : { kind: 'numberValue', numberValue: v });
const hostPort = (ip: string | undefined, port: number | undefined): string | undefined =>
  ip === undefined || port === undefined ? undefined : ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;

function query(path: string): string {
  const at = path.indexOf('?');
  return at === -1 ? '' : path.slice(at + 1);
}

function headersValue(ctx: ProxyRequest): StructValue {
  const fields: Record<string, string> = {};
  for (const [name, value] of ctx.headers.entries()) fields[name] = fields[name] === undefined ? value : `${fields[name]},${value}`;
  return { kind: 'structValue', structValue: structOf(fields) };
}

const ATTRIBUTES: Readonly<Record<string, Evaluate>> = {
  'request.path': (ctx) => text(ctx.path),
  'request.url_path': (ctx) => text(ctx.path.split('?')[0]),
  'request.host': (ctx) => text(ctx.authority),
  'request.scheme': (ctx) => text(ctx.scheme),
  'request.method': (ctx) => text(ctx.method),
  'request.headers': headersValue,
  'request.referer': (ctx) => text(ctx.headers.get('referer')),
  'request.useragent': (ctx) => text(ctx.headers.get('user-agent')),
  'request.id': (ctx) => text(ctx.requestId),
  'request.protocol': (ctx) => text(`HTTP/${ctx.exchange.connectionInfo.httpVersion}`),
  'request.query': (ctx) => text(query(ctx.path)),
  'request.time': () => text(new Date().toISOString()),
  'source.address': (ctx) => {
    const c = ctx.exchange.connectionInfo;
    return text(hostPort(c.remoteAddress === '' ? undefined : c.remoteAddress, c.remotePort));
  },
  'source.port': (ctx) => num(ctx.exchange.connectionInfo.remotePort),
  'destination.address': (ctx) => {
    const c = ctx.exchange.connectionInfo;
    return text(hostPort(c.localAddress, c.localPort));
  },
  'destination.port': (ctx) => num(ctx.exchange.connectionInfo.localPort),
  'connection.id': (ctx) => {
    const id = ctx.exchange.connectionInfo.id;
    return num(id === 0 ? undefined : id);
  },
  'connection.mtls': () => ({ kind: 'boolValue', boolValue: false }),
  'connection.requested_server_name': () => text(''),
};

export const SUPPORTED_ATTRIBUTES: readonly string[] = Object.freeze(Object.keys(ATTRIBUTES));

export function isSupportedAttribute(name: string): boolean {
  return Object.hasOwn(ATTRIBUTES, name);
}

/** The `attributes` map for `names` (absent values are left out, as Envoy does). */
export function requestAttributes(ctx: ProxyRequest, names: readonly string[]): Record<string, StructMessage> {
  const fields: Record<string, StructValue> = {};
  for (const name of names) {
    const value = ATTRIBUTES[name]?.(ctx);
    if (value !== undefined) fields[name] = value;
  }
  return { [ATTRIBUTES_KEY]: { fields } };
}
