/**
 * One ordinary client request (`ClientRequest`: HTTP/1.1 over a raw socket, or HTTP/2 through node's client) to an
 * actor, for the targets that fuzz what the proxy is answered rather than what it is sent. The request also tries
 * to steer the proxy to the decoy (forged internal headers), which must never work. Returns the answer in one shape
 * for both protocols, with the problems the client-side checks found.
 */
import { FORGED, type ClientRequest, type Field, type Http1Request } from './arbitraries.js';
import { sendH2 } from './h2-client.js';
import { http1Problems } from './http1-checks.js';
import { sendHttp1 } from './http1-client.js';
import { http1Wire } from './http1-wire.js';

export interface ClientAnswer {
  /** The final status, when one arrived. */
  readonly status: number | undefined;
  /** Lower-case names. */
  readonly headers: readonly (readonly [string, string])[];
  readonly trailers: readonly (readonly [string, string])[];
  readonly bodyLength: number | undefined;
  readonly problems: string[];
}

const DEADLINE_MS = 10_000;

function forged(decoy: string): Field[] {
  return [
    { name: 'x-envoy-original-dst-host', value: decoy },
    { name: 'x-ate-original-dst', value: decoy },
    { name: 'x-ate-target-port', value: FORGED },
  ];
}

export async function sendClientRequest(address: string, req: ClientRequest, authority: string, id: string, decoy: string): Promise<ClientAnswer> {
  if (req.protocol === 'h2') {
    const fields: [string, string][] = [[':method', req.method], [':scheme', 'http'], [':path', `/${id}`], [':authority', authority], ...forged(decoy).map((f): [string, string] => [f.name, f.value as string])];
    const [o] = await sendH2({ address, tls: false, via: 'node', streams: [{ id, fields, body: req.body === '' ? undefined : req.body }], deadlineMs: DEADLINE_MS });
    const problems: string[] = [];
    if (o === undefined) return { status: undefined, headers: [], trailers: [], bodyLength: undefined, problems: ['no stream outcome'] };
    if (!o.done) problems.push(`stream ${id}: no answer, reset or close within the deadline`);
    if (o.problem !== undefined) problems.push(`stream ${id}: ${o.problem}`);
    const headers = Object.entries(o.headers ?? {}).flatMap(([n, v]) => (Array.isArray(v) ? v.map((x): [string, string] => [n, x]) : [[n, String(v)] as [string, string]]));
    return { status: o.status, headers, trailers: [], bodyLength: o.bodyLength, problems };
  }
  const upgrade: Field[] = req.upgrade
    ? [
        { name: 'Connection', value: 'upgrade' },
        { name: 'Upgrade', value: 'websocket' },
        { name: 'Sec-WebSocket-Key', value: 'dGhlIHNhbXBsZSBub25jZQ==' },
        { name: 'Sec-WebSocket-Version', value: '13' },
      ]
    : [];
  const request: Http1Request = {
    method: req.method,
    target: `/${id}`,
    version: 'HTTP/1.1',
    head: { host: 'one', authority, second: '', fields: [...forged(decoy), ...upgrade], hop: [] },
    framing: req.body === '' ? { kind: 'none' } : { kind: 'length', body: req.body },
    eol: '\r\n',
  };
  const wire = http1Wire(request, id, false);
  const out = await sendHttp1({ address, tls: false, parts: [wire.bytes], methods: [req.method], expected: 1, halfClose: false, deadlineMs: DEADLINE_MS });
  // Whether it must be answered depends on what the proxy was answered: the caller checks that.
  const problems = http1Problems(out, [{ ...wire, wellFormed: false }]);
  const a = out.reading.answers[0];
  return { status: a?.status, headers: a?.headers ?? [], trailers: a?.trailers ?? [], bodyLength: a?.bodyLength, problems };
}
