/**
 * The fuzz suite's generators (fast-check arbitraries), shared by every target: what a client sends (HTTP/1.1
 * request heads and framings, HTTP/2 header blocks), what a worker answers, and what an ext_proc server answers.
 * Cases are plain data, small when printed: a huge value is `{ repeat, times }`, expanded only on the wire
 * (`expand`). The wire forms are built by `http1-wire.ts`, `worker-wire.ts` and the targets themselves.
 *
 * The addresses a case may name come from `FuzzTargets`: the seeded actors (requests that reach a worker), and the
 * decoy (an address only a client names: the proxy must never connect there).
 */
import fc from 'fast-check';
import { SUFFIX } from '../../../lib/testing/actors.js';
import { FORGEABLE_HEADERS } from '../forgeable-headers.js';

/** A header value or target: a string, or a long run of one string. */
export type Text = string | { readonly repeat: string; readonly times: number };

export function expand(t: Text): string {
  return typeof t === 'string' ? t : t.repeat.repeat(t.times);
}

export interface FuzzTargets {
  /** Authorities of actors the control plane knows. */
  readonly actors: readonly string[];
  /** `127.0.0.1:port` that only clients name. */
  readonly decoy: string;
}

/** The value every header a client forges carries, so a worker receiving it is told apart from a legitimate one. */
export const FORGED = 'forged-by-client';

const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>): fc.WeightedArbitrary<T> => ({ weight, arbitrary });
const anyCase = (s: string): fc.Arbitrary<string> => fc.constantFrom(s, s.toUpperCase(), s.replace(/(^|-)([a-z])/g, (_, d: string, c: string) => d + c.toUpperCase()));

// ---- authorities, methods, targets ----

export function authorityArb(t: FuzzTargets): fc.Arbitrary<string> {
  const actor = fc.constantFrom(...t.actors);
  const decoyPort = t.decoy.slice(t.decoy.lastIndexOf(':') + 1);
  return fc.oneof(
    w(8, actor),
    w(2, fc.tuple(actor, fc.constantFrom(80, 8080, 443, 1, 65535)).map(([a, p]) => `${a}:${p}`)),
    w(1, actor.map((a) => a.toUpperCase())),
    w(1, actor.map((a) => `${a}.`)),
    w(1, fc.constantFrom(`nosuch-actor.demo.${SUFFIX}`, `actor-000.other-space.${SUFFIX}`, `bad_name!.demo.${SUFFIX}`, SUFFIX, `.demo.${SUFFIX}`)),
    w(2, fc.constantFrom(t.decoy, `localhost:${decoyPort}`, `[::1]:${decoyPort}`, '127.0.0.1', `127.0.0.1:${decoyPort}.`)),
    w(2, actor.chain((a) => fc.constantFrom('', ' ', 'a b', `user@${a}`, `${a}:`, `${a}:99999`, `${a}:-1`, `http://${a}`, '%00', '\u00e9.demo', '[::1', `${a}/x`, `${a} `, `${a}\t`))),
    w(1, fc.string({ maxLength: 30 })),
  );
}

const TOKEN_CHARS = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,16}$/;

export const methodArb: fc.Arbitrary<string> = fc.oneof(
  w(10, fc.constantFrom('GET', 'GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'TRACE')),
  w(3, fc.constant('CONNECT')),
  w(2, fc.constantFrom('get', 'M-SEARCH', 'PRI', 'PROPFIND', 'FOO', 'ACL', 'SOURCE', 'LINK')),
  w(1, fc.stringMatching(TOKEN_CHARS)),
  w(1, fc.constantFrom('', 'G ET', 'GET\x00', '\u00c4', 'GET/', '"GET"')),
);

/** A method the proxy forwards as is (a request a client means). */
export const STANDARD_METHODS: ReadonlySet<string> = new Set(['GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'TRACE']);

const pathArb: fc.Arbitrary<string> = fc.oneof(
  w(4, fc.stringMatching(/^\/[A-Za-z0-9._~!$&'()*+,;=:@%/-]{0,24}(\?[A-Za-z0-9=&%]{0,12})?$/)),
  w(1, fc.constantFrom('/', '/a/../b', '//x', '/%2e%2e/', '/?q=1#frag', '/%00', '/a?b=c&d', '/\u00e9')),
);

export function targetArb(t: FuzzTargets): fc.Arbitrary<Text> {
  const auth = authorityArb(t);
  return fc.oneof(
    w(10, pathArb),
    w(3, fc.tuple(fc.constantFrom('http://', 'HTTP://', 'https://', 'ftp://', 'http:/', 'http:', 'ws://'), auth, fc.option(pathArb, { nil: '' })).map(([s, a, p]) => `${s}${a}${p}`)),
    w(1, auth.map((a) => `http://user:pw@${a}/`)),
    w(2, auth),
    w(1, fc.constant('*')),
    w(2, fc.constantFrom<Text>('', ' ', '/a b', '/\x01', 'http://[::1', '\u00e9', '/\r', { repeat: '/a', times: 5000 }, { repeat: 'x', times: 70_000 })),
  );
}

// ---- header fields ----

export interface Field {
  readonly name: string;
  readonly value: Text;
}

export const valueArb: fc.Arbitrary<Text> = fc.oneof(
  w(8, fc.string({ unit: fc.constantFrom(...'abcXYZ019 -_.,;=/"()'), maxLength: 24 })),
  w(2, fc.constant('')),
  w(2, fc.constantFrom<Text>({ repeat: 'v', times: 8_000 }, { repeat: 'v', times: 30_000 }, { repeat: 'v', times: 70_000 })),
  w(1, fc.constantFrom('a\r\n b', 'a\rb', 'a\nb', 'a\x00b', '\u00e4\u00f6', ' lead', 'trail ', '\tx', 'a\x7fb', '\u2603')),
);

/** A header a client could send; `hop` fields come with a Connection naming them (`fieldsArb`). */
export function fieldArb(t: FuzzTargets): fc.Arbitrary<Field> {
  const f = (name: fc.Arbitrary<string>, value: fc.Arbitrary<Text>): fc.Arbitrary<Field> => fc.record({ name, value });
  return fc.oneof(
    w(4, f(fc.constantFrom('accept', 'user-agent', 'x-custom', 'X-Custom', 'ACCEPT', 'cache-control', 'cookie', 'content-type'), valueArb)),
    w(2, f(anyCase('connection'), fc.constantFrom('close', 'keep-alive', 'upgrade', 'Upgrade, HTTP2-Settings', 'content-length', 'host', 'x-request-id', ''))),
    w(1, f(fc.constantFrom('keep-alive', 'Proxy-Connection', 'TE', 'te', 'Trailer', 'HTTP2-Settings'), fc.constantFrom('timeout=5', 'keep-alive', 'trailers', 'gzip', 'x-t', 'AAMAAABkAAQAAP__'))),
    w(2, f(anyCase('upgrade'), fc.constantFrom('websocket', 'h2c', 'foo', 'websocket, h2c', ''))),
    w(1, f(fc.constantFrom('Sec-WebSocket-Key', 'Sec-WebSocket-Version'), fc.constantFrom('dGhlIHNhbXBsZSBub25jZQ==', '13', ''))),
    w(3, f(fc.constantFrom(...FORGEABLE_HEADERS).chain(anyCase), fc.constantFrom(FORGED, t.decoy, `${FORGED}, ${t.decoy}`))),
    w(1, f(fc.constantFrom('x-forwarded-for', 'forwarded', 'x-real-ip', 'x-forwarded-host', 'x-forwarded-proto'), fc.constantFrom('1.2.3.4', 'for=1.2.3.4', t.decoy, 'https', ''))),
    w(1, f(anyCase('expect'), fc.constantFrom('100-continue', 'foo', ''))),
    w(1, f(fc.constant('x-request-id'), fc.constantFrom('', ' ', 'a b', '\u00e9', { repeat: 'r', times: 300 }))),
    w(1, f(fc.constant('content-type'), fc.constantFrom('application/grpc', 'application/grpc+proto', 'text/plain'))),
    w(1, f(anyCase('host'), authorityArb(t))),
    w(1, f(fc.stringMatching(TOKEN_CHARS), valueArb)),
    w(1, f(fc.constantFrom('bad name', '', 'x\x00', '\u00e4', 'x"y', 'x(y)', ' x'), valueArb)),
  );
}

export interface FieldsWithHost {
  readonly host: 'one' | 'none' | 'two';
  readonly authority: string;
  readonly second: string;
  readonly fields: readonly Field[];
  /** Headers the request's Connection names (sent, and never forwarded). */
  readonly hop: readonly string[];
}

export function fieldsArb(t: FuzzTargets, maxLength = 6): fc.Arbitrary<FieldsWithHost> {
  return fc.record({
    host: fc.constantFrom<FieldsWithHost['host']>('one', 'one', 'one', 'one', 'one', 'one', 'none', 'two'),
    authority: authorityArb(t),
    second: authorityArb(t),
    fields: fc.array(fieldArb(t), { maxLength }),
    hop: fc.subarray(['x-fuzz-hop-1', 'x-fuzz-hop-2']),
  });
}

// ---- HTTP/1.1 requests ----

export type Framing =
  | { readonly kind: 'none' }
  /** Content-Length and exactly that many bytes. */
  | { readonly kind: 'length'; readonly body: string }
  | { readonly kind: 'chunked'; readonly chunks: readonly string[]; readonly extensions: boolean; readonly trailers: readonly Field[] }
  /** Content-Length larger than the body sent (the request never completes). */
  | { readonly kind: 'short-body'; readonly body: string; readonly missing: number }
  /** Content-Length smaller than the bytes sent (the rest reads as what comes next). */
  | { readonly kind: 'long-body'; readonly body: string; readonly extra: string }
  | { readonly kind: 'length-and-chunked'; readonly body: string }
  | { readonly kind: 'two-lengths'; readonly body: string; readonly other: number }
  | { readonly kind: 'truncated-chunked'; readonly chunks: readonly string[] }
  | { readonly kind: 'bad-chunk-size'; readonly size: string }
  | { readonly kind: 'other-coding'; readonly coding: string; readonly body: string };

const bodyArb = fc.string({ unit: fc.constantFrom(...'abcdefgh0123 \r\n'), maxLength: 40 });

export const framingArb: fc.Arbitrary<Framing> = fc.oneof(
  w(8, fc.constant({ kind: 'none' } as const)),
  w(4, fc.record({ kind: fc.constant('length' as const), body: bodyArb })),
  w(3, fc.record({ kind: fc.constant('chunked' as const), chunks: fc.array(bodyArb.filter((s) => s !== ''), { maxLength: 3 }), extensions: fc.boolean(), trailers: fc.array(fc.record({ name: fc.constantFrom('x-trailer', 'content-length', 'host', 'x-ate-target-port', 'transfer-encoding'), value: fc.constantFrom('1', FORGED) }), { maxLength: 2 }) })),
  w(1, fc.record({ kind: fc.constant('short-body' as const), body: bodyArb, missing: fc.integer({ min: 1, max: 100 }) })),
  w(1, fc.record({ kind: fc.constant('long-body' as const), body: bodyArb, extra: fc.constantFrom('GET / HTTP/1.1\r\n\r\n', 'xyz', '\r\n') })),
  w(1, fc.record({ kind: fc.constant('length-and-chunked' as const), body: bodyArb })),
  w(1, fc.record({ kind: fc.constant('two-lengths' as const), body: bodyArb, other: fc.integer({ min: 0, max: 50 }) })),
  w(1, fc.record({ kind: fc.constant('truncated-chunked' as const), chunks: fc.array(bodyArb.filter((s) => s !== ''), { minLength: 1, maxLength: 2 }) })),
  w(1, fc.record({ kind: fc.constant('bad-chunk-size' as const), size: fc.constantFrom('zz', '-1', 'ffffffffffffffffff', '1 1', '', '0x5', ' 5') })),
  w(1, fc.record({ kind: fc.constant('other-coding' as const), coding: fc.constantFrom('gzip', 'chunked, gzip', 'identity', 'chunked, chunked', 'CHUNKED', ' chunked'), body: bodyArb })),
);

export interface Http1Request {
  readonly method: string;
  readonly target: Text;
  readonly version: string;
  readonly head: FieldsWithHost;
  readonly framing: Framing;
  /** Line ends of the head: CRLF, or bare LF. */
  readonly eol: '\r\n' | '\n';
}

/** Any request: every dimension drawn from the whole range (most are refused before any filter runs). */
function noisyRequestArb(t: FuzzTargets): fc.Arbitrary<Http1Request> {
  return fc.record({
    method: methodArb,
    target: targetArb(t),
    version: fc.oneof(w(12, fc.constant('HTTP/1.1')), w(1, fc.constantFrom('HTTP/1.0', 'HTTP/1.2', 'HTTP/2.0', 'HTTP/0.9', '', 'http/1.1', 'HTTP/1.1 x', 'HTTP/11'))),
    head: fieldsArb(t),
    framing: framingArb,
    eol: fc.oneof(w(12, fc.constant('\r\n' as const)), w(1, fc.constant('\n' as const))),
  });
}

/** Header fields a conforming client sends (internal ones forged, too: they are valid syntax). */
function cleanFieldArb(t: FuzzTargets): fc.Arbitrary<Field> {
  return fc.oneof(
    w(3, fc.record({ name: fc.constantFrom('accept', 'user-agent', 'X-Custom', 'cache-control', 'cookie'), value: fc.stringMatching(/^[a-z0-9=;/]{0,12}$/) as fc.Arbitrary<Text> })),
    w(2, fc.record({ name: fc.constantFrom(...FORGEABLE_HEADERS).chain(anyCase), value: fc.constantFrom<Text>(FORGED, t.decoy) })),
    w(1, fc.record({ name: fc.constantFrom('x-forwarded-for', 'x-forwarded-proto', 'forwarded', 'connection', 'keep-alive', 'te'), value: fc.constantFrom<Text>('1.2.3.4', 'https', 'keep-alive', 'trailers') })),
  );
}

/** A request a conforming client could send to an actor. */
function cleanRequestArb(t: FuzzTargets): fc.Arbitrary<Http1Request> {
  const actor = fc.constantFrom(...t.actors);
  return fc.record({
    method: fc.constantFrom('GET', 'GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'),
    target: fc.oneof(w(4, pathArb as fc.Arbitrary<Text>), w(1, fc.tuple(actor, pathArb).map(([a, p]): Text => `http://${a}${p}`))),
    version: fc.constant('HTTP/1.1'),
    head: fc.record({
      host: fc.constant('one' as const),
      authority: fc.oneof(w(4, actor), w(1, actor.map((a) => `${a}:8080`))),
      second: fc.constant(''),
      fields: fc.array(cleanFieldArb(t), { maxLength: 4 }),
      hop: fc.subarray(['x-fuzz-hop-1', 'x-fuzz-hop-2']),
    }),
    framing: fc.oneof(w(3, fc.constant({ kind: 'none' } as const)), w(1, framingArb.filter((f) => f.kind === 'length' || f.kind === 'chunked'))),
    eol: fc.constant('\r\n' as const),
  });
}

type Dimension = 'method' | 'target' | 'version' | 'framing' | 'eol' | 'host' | 'fields';

/** A conforming request with one dimension from the whole range: the edge of what is accepted. */
function oneOffRequestArb(t: FuzzTargets): fc.Arbitrary<Http1Request> {
  const dims: Dimension[] = ['method', 'target', 'version', 'framing', 'eol', 'host', 'fields'];
  return fc.tuple(cleanRequestArb(t), noisyRequestArb(t), fc.constantFrom(...dims)).map(([c, n, d]) => {
    switch (d) {
      case 'host':
        return { ...c, head: { ...c.head, host: n.head.host, authority: n.head.authority, second: n.head.second } };
      case 'fields':
        return { ...c, head: { ...c.head, fields: [...c.head.fields, ...n.head.fields] } };
      default:
        return { ...c, [d]: n[d] };
    }
  });
}

export function http1RequestArb(t: FuzzTargets): fc.Arbitrary<Http1Request> {
  return fc.oneof(w(3, cleanRequestArb(t)), w(4, oneOffRequestArb(t)), w(2, noisyRequestArb(t)));
}

export interface Http1Case {
  readonly tls: boolean;
  readonly requests: readonly Http1Request[];
  /** Where the bytes are split into separate writes, as fractions of their length. */
  readonly cuts: readonly number[];
}

export function http1CaseArb(t: FuzzTargets): fc.Arbitrary<Http1Case> {
  return fc.record({
    tls: fc.boolean(),
    requests: fc.array(http1RequestArb(t), { minLength: 1, maxLength: 3 }),
    cuts: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 3 }),
  });
}

// ---- HTTP/2 header blocks ----

export interface H2Stream {
  /** The header block as sent, in order (pseudo-headers included). */
  readonly fields: readonly (readonly [string, Text])[];
  /** A body (DATA frames) after the headers, or none (END_STREAM on HEADERS). */
  readonly body: string | undefined;
}

export interface H2Case {
  readonly tls: boolean;
  /** `node`: node's http2 client where it accepts the block (else raw frames); `raw`: always raw frames. */
  readonly via: 'node' | 'raw';
  readonly streams: readonly H2Stream[];
}

type Pair = readonly [string, Text];

/** Any header block: every part drawn from the whole range. */
function noisyH2FieldsArb(t: FuzzTargets): fc.Arbitrary<Pair[]> {
  const auth = authorityArb(t);
  const method = methodArb;
  const path = fc.oneof(w(6, pathArb as fc.Arbitrary<Text>), w(2, fc.constantFrom<Text>('', '*', 'garbage', 'http://x/y', '/a b', { repeat: '/p', times: 40_000 })), w(1, targetArb(t)));
  const scheme = fc.constantFrom('http', 'https', '', 'ftp', 'HTTP');
  const protocol = fc.constantFrom('websocket', 'foo', '', 'connect-udp');
  const pseudo: fc.Arbitrary<Pair[]> = fc.oneof(
    w(4, fc.tuple(method, scheme, path, auth).map(([m, s, p, a]): Pair[] => [[':method', m], [':scheme', s], [':path', p], [':authority', a]])),
    w(3, fc.tuple(auth, fc.subarray<Pair>([[':path', '/'], [':scheme', 'http']])).map(([a, extra]): Pair[] => [[':method', 'CONNECT'], [':authority', a], ...extra])),
    w(2, fc.tuple(protocol, scheme, path, auth).map(([pr, s, p, a]): Pair[] => [[':method', 'CONNECT'], [':protocol', pr], [':scheme', s], [':path', p], [':authority', a]])),
    w(3, fc.tuple(method, scheme, path, auth, protocol, method).chain(([m, s, p, a, pr, m2]) =>
      fc.shuffledSubarray<Pair>([[':method', m], [':scheme', s], [':path', p], [':authority', a], [':protocol', pr], [':method', m2], [':status', '200'], [':foo', 'x']]),
    )),
  );
  return fc.tuple(pseudo, fc.array(noisyH2FieldArb(t), { maxLength: 5 }), fc.nat(6)).map(([p, r, at]) => {
    // Regular fields go after the pseudo-headers, but sometimes one comes first (a malformed block).
    if (at !== 0 || r.length === 0) return [...p, ...r];
    return [r[0] as Pair, ...p, ...r.slice(1)];
  });
}

function noisyH2FieldArb(t: FuzzTargets): fc.Arbitrary<Pair> {
  return fc.oneof(
    w(6, fieldArb(t).map((f): Pair => [f.name.toLowerCase(), f.value])),
    w(2, fieldArb(t).map((f): Pair => [f.name, f.value])),
    w(2, fc.tuple(fc.constantFrom('connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'TE', 'http2-settings'), fc.constantFrom('trailers', 'gzip', 'trailers, deflate', 'TRAILERS', 'chunked', 'keep-alive', 'close', ''))),
    w(1, fc.tuple(fc.constant('cookie'), fc.constantFrom('a=1', 'b=2', ''))),
    w(1, fc.tuple(fc.constant('content-length'), fc.constantFrom('0', '3', '99', 'x', '-1', '1, 2'))),
  );
}

/** A block a conforming client sends to an actor (internal headers forged: valid syntax). */
function cleanH2FieldsArb(t: FuzzTargets): fc.Arbitrary<Pair[]> {
  const actor = fc.constantFrom(...t.actors);
  return fc
    .record({
      method: fc.constantFrom('GET', 'GET', 'POST', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'),
      scheme: fc.constantFrom('http', 'https'),
      path: pathArb,
      authority: fc.oneof(w(4, actor), w(1, actor.map((a) => `${a}:8080`))),
      fields: fc.array(
        fc.oneof(
          cleanFieldArb(t).map((f): Pair => [f.name.toLowerCase(), f.value]).filter(([n]) => n !== 'connection' && n !== 'keep-alive' && n !== 'te'),
          fc.constantFrom<Pair>(['te', 'trailers'], ['cookie', 'a=1'], ['cookie', 'b=2'], ['content-type', 'text/plain']),
        ),
        { maxLength: 4 },
      ),
    })
    .map((r): Pair[] => [[':method', r.method], [':scheme', r.scheme], [':path', r.path], [':authority', r.authority], ...r.fields]);
}

/** A conforming block with one change drawn from the whole range: one pseudo-header's value, one dropped or repeated, a CONNECT, or one more field. */
function oneOffH2FieldsArb(t: FuzzTargets): fc.Arbitrary<Pair[]> {
  return fc.tuple(cleanH2FieldsArb(t), noisyH2FieldsArb(t), noisyH2FieldArb(t), fc.nat(3), fc.constantFrom('value', 'drop', 'repeat', 'connect', 'field')).map(([clean, noisy, extra, i, how]): Pair[] => {
    const at = i % 4;
    switch (how) {
      case 'value': {
        const replacement = noisy.find(([n]) => n === clean[at]?.[0]);
        return replacement === undefined ? clean : clean.map((f, j) => (j === at ? replacement : f));
      }
      case 'drop':
        return clean.filter((_, j) => j !== at);
      case 'repeat':
        return [...clean.slice(0, 4), clean[at] as Pair, ...clean.slice(4)];
      case 'connect':
        return [[':method', 'CONNECT'], ...clean.slice(1).filter(([n]) => n !== ':path' && n !== ':scheme')];
      case 'field':
        return [...clean, extra];
    }
  });
}

export function h2FieldsArb(t: FuzzTargets): fc.Arbitrary<Pair[]> {
  return fc.oneof(w(3, cleanH2FieldsArb(t)), w(4, oneOffH2FieldsArb(t)), w(2, noisyH2FieldsArb(t)));
}

export function h2CaseArb(t: FuzzTargets): fc.Arbitrary<H2Case> {
  return fc.record({
    tls: fc.boolean(),
    via: fc.constantFrom<H2Case['via']>('node', 'raw'),
    streams: fc.array(fc.record({ fields: h2FieldsArb(t), body: fc.option(bodyArb, { nil: undefined }) }), { minLength: 1, maxLength: 3 }),
  });
}

// ---- worker answers ----

export type AnswerFraming = 'length' | 'chunked' | 'close-delimited' | 'short-length' | 'long-length' | 'length-and-chunked' | 'two-lengths' | 'bad-chunk';

export interface WorkerAnswer {
  /** Interim statuses before the answer (each `HTTP/1.1 1xx`). */
  readonly interim: readonly number[];
  readonly version: string;
  readonly status: number;
  readonly reason: string;
  readonly fields: readonly Field[];
  readonly body: string;
  readonly framing: AnswerFraming;
  readonly trailers: readonly Field[];
  /** Close after this fraction of the answer's bytes (undefined: write it all). */
  readonly cut: number | undefined;
  /** Keep the connection open for the next request (only after a whole, well-framed answer). */
  readonly keepAlive: boolean;
}

/** A worker's field its own Connection names (so never relayed); they are sent together. */
export const WORKER_NAMED_HOP: readonly Field[] = [
  { name: 'Connection', value: 'x-worker-hop' },
  { name: 'x-worker-hop', value: 'secret' },
];

/** The headers a worker may send that describe its connection (never relayed). */
export const WORKER_HOP_FIELDS: readonly Field[] = [
  { name: 'Keep-Alive', value: 'timeout=5, max=1000' },
  { name: 'Proxy-Connection', value: 'keep-alive' },
  { name: 'TE', value: 'trailers' },
  { name: 'Trailer', value: 'x-worker-trailer' },
  { name: 'Upgrade', value: 'websocket' },
  { name: 'HTTP2-Settings', value: 'AAMAAABkAAQAAP__' },
];

const workerFieldArb: fc.Arbitrary<Field | readonly Field[]> = fc.oneof(
  w(2, fc.constant(WORKER_NAMED_HOP)),
  w(4, fc.record({ name: fc.constantFrom('content-type', 'x-app', 'cache-control', 'set-cookie', 'Server'), value: fc.stringMatching(/^[a-z0-9=;/ ]{0,12}$/) as fc.Arbitrary<Text> })),
  w(3, fc.constantFrom(...WORKER_HOP_FIELDS)),
  w(2, fc.record({ name: fc.constantFrom('x-ate-assignment-stale', 'X-Ate-Assignment-Stale'), value: fc.constantFrom<Text>('true', 'TRUE', 'false', '') })),
  w(1, fc.record({ name: fc.constantFrom('connection'), value: fc.constantFrom<Text>('close', 'keep-alive', 'upgrade') })),
  w(1, fc.record({ name: fc.constantFrom('x-big', 'x-empty', 'bad name', 'x-ctl'), value: fc.constantFrom<Text>({ repeat: 'b', times: 70_000 }, '', 'a\x01b', 'a\rb') })),
);

const workerStatusArb: fc.Arbitrary<number> = fc.oneof(
  w(4, fc.integer({ min: 100, max: 599 })),
  w(3, fc.constantFrom(101, 421, 421, 200, 204, 304, 500, 503, 100, 103)),
  w(1, fc.constantFrom(0, 99, 600, 999)),
);

const anyWorkerAnswerArb: fc.Arbitrary<WorkerAnswer> = fc.record({
  interim: fc.oneof(w(6, fc.constant([])), w(1, fc.array(fc.constantFrom(100, 102, 103), { minLength: 1, maxLength: 2 }))),
  version: fc.oneof(w(12, fc.constant('HTTP/1.1')), w(1, fc.constantFrom('HTTP/1.0', 'HTTP/2', 'HTTP/1.2', 'ICY', 'http/1.1', 'HTTP/1.1 '))),
  status: workerStatusArb,
  reason: fc.oneof(w(6, fc.constantFrom('OK', 'Misdirected Request', 'x')), w(1, fc.constantFrom('', 'a\x01b', 'caf\u00e9'))),
  fields: fc.array(workerFieldArb, { maxLength: 4 }).map((fs) => fs.flatMap((f): Field[] => ('name' in f ? [f as Field] : [...(f as readonly Field[])]))),
  body: fc.string({ unit: fc.constantFrom(...'abcdef0123\r\n'), maxLength: 60 }),
  framing: fc.oneof(
    w(6, fc.constantFrom<AnswerFraming>('length', 'chunked')),
    w(1, fc.constantFrom<AnswerFraming>('close-delimited', 'short-length', 'long-length', 'length-and-chunked', 'two-lengths', 'bad-chunk')),
  ),
  trailers: fc.array(fc.oneof(fc.constantFrom(...WORKER_HOP_FIELDS), fc.record({ name: fc.constantFrom('x-worker-trailer', 'x-ate-assignment-stale', 'content-length', 'grpc-status'), value: fc.constantFrom<Text>('1', 'true') })), { maxLength: 2 }),
  cut: fc.oneof(w(4, fc.constant(undefined)), w(1, fc.double({ min: 0, max: 1, noNaN: true }))),
  keepAlive: fc.boolean(),
});

/** The worker's "this actor is not here": 421 with the stale signal (any case), sometimes among other fields. */
const staleAnswerArb: fc.Arbitrary<WorkerAnswer> = fc
  .tuple(anyWorkerAnswerArb, fc.constantFrom<Text>('true', 'TRUE', 'True'), fc.boolean())
  .map(([a, value, bare]) => ({ ...a, status: 421, version: 'HTTP/1.1', reason: 'Misdirected Request', interim: [], fields: [{ name: 'x-ate-assignment-stale', value }, ...(bare ? [] : a.fields)] }));

export const workerAnswerArb: fc.Arbitrary<WorkerAnswer> = fc.oneof(
  w(6, anyWorkerAnswerArb),
  w(2, staleAnswerArb),
  w(1, anyWorkerAnswerArb.map((a) => ({ ...a, status: 421, fields: a.fields.filter((f) => f.name.toLowerCase() !== 'x-ate-assignment-stale') }))),
);

export interface ClientRequest {
  readonly protocol: 'h1' | 'h2';
  readonly method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE';
  readonly body: string;
  /** HTTP/1.1 only: a WebSocket handshake (Connection: upgrade, Upgrade: websocket). */
  readonly upgrade: boolean;
}

export const clientRequestArb: fc.Arbitrary<ClientRequest> = fc
  .record({
    protocol: fc.constantFrom<ClientRequest['protocol']>('h1', 'h2'),
    method: fc.constantFrom<ClientRequest['method']>('GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE'),
    body: fc.string({ unit: fc.constantFrom(...'xyz012'), maxLength: 30 }),
    upgrade: fc.oneof(w(5, fc.constant(false)), w(1, fc.constant(true))),
  })
  .map((r) => ({ ...r, body: r.method === 'POST' || r.method === 'PUT' ? r.body : '', upgrade: r.upgrade && r.protocol === 'h1' && r.method === 'GET' }));

export interface WorkerCase {
  readonly request: ClientRequest;
  /** The worker's answers to the requests it receives in this case, in order (then 200s). */
  readonly answers: readonly WorkerAnswer[];
}

export const workerCaseArb: fc.Arbitrary<WorkerCase> = fc.record({
  request: clientRequestArb,
  answers: fc.array(workerAnswerArb, { minLength: 1, maxLength: 3 }),
});

// ---- ext_proc answers ----

/** Where an ext_proc answer routes a request: the worker, another form of its address, or something unusable. */
export type RouteChoice = 'worker' | 'worker-localhost' | 'worker-v6' | 'refused' | 'garbage' | 'none';

export interface ExtProcHeader {
  readonly key: string;
  readonly raw?: Text;
  readonly value?: string;
  readonly append?: boolean;
}

export interface ExtProcMutation {
  readonly set: readonly ExtProcHeader[];
  readonly remove: readonly string[];
}

/** One generated ext_proc answer, before it becomes a `ProcessingResponse` (`extproc-wire.ts`). */
export type ExtProcAnswer =
  /** `match`: an answer to whichever message it gets; the others answer one phase, whatever was asked. */
  | { readonly kind: 'match' | 'headers' | 'body' | 'response-headers'; readonly status: string; readonly mutation: ExtProcMutation | undefined; readonly bodyMutation: 'none' | 'replace' | 'clear'; readonly route: RouteChoice; readonly metadataShape: 'string' | 'number' | 'other-namespace'; readonly modeOverride: boolean; readonly timeoutOverride: boolean }
  | { readonly kind: 'immediate'; readonly code: string | number | undefined; readonly mutation: ExtProcMutation | undefined; readonly body: string; readonly grpcStatus: number | undefined }
  | { readonly kind: 'streamed-immediate'; readonly code: string; readonly body: string }
  | { readonly kind: 'empty' }
  | { readonly kind: 'ignore' | 'end-ok' | 'fail' };

/** The value every internal header an ext_proc answer sets carries (allowed to reach the worker). */
export const FROM_EXTPROC = 'set-by-extproc';

/** Any header mutation entry: names and values from the whole range, `value` and `raw_value` in any combination. */
const oddExtProcHeaderArb: fc.Arbitrary<ExtProcHeader> = fc.record(
  {
    key: fc.oneof(
      w(3, fc.constantFrom(':path', ':method', ':authority', 'host', ':scheme', ':status', ':foo')),
      w(2, fc.constantFrom('connection', 'transfer-encoding', 'content-length', 'x-envoy-original-dst-host', 'te', 'upgrade')),
      w(1, fc.constantFrom('', 'bad name', 'x\u0000', '\u00e4', 'x:y')),
    ),
    raw: fc.oneof(
      w(5, fc.constantFrom<Text>(FROM_EXTPROC, '', '/new-path?x=1', 'http://elsewhere/', 'GET', 'PATCH', '201', '999', 'close', '5')),
      w(1, fc.constantFrom<Text>('a\r\nx-injected: 1', 'a\u0000b', 'caf\u00e9', { repeat: 'h', times: 70_000 })),
    ),
    value: fc.constantFrom('value-only', ''),
    append: fc.boolean(),
  },
  { requiredKeys: ['key'] },
);

/** A mutation entry a processor means: a valid name (internal ones included) and value in `raw_value`. */
const cleanExtProcHeaderArb: fc.Arbitrary<ExtProcHeader> = fc.oneof(
  w(4, fc.record({ key: fc.constantFrom('x-from-extproc', 'X-Upper', 'x-ate-target-port', 'x-ate-original-dst', 'ate-target-actor', 'cookie'), raw: fc.constantFrom<Text>(FROM_EXTPROC, '5'), append: fc.boolean() })),
  w(1, fc.record({ key: fc.constant(':path'), raw: fc.constantFrom<Text>('/new-path?x=1', '/') })),
  // The routing headers a processor may never change (refused, so the request goes on unchanged).
  w(1, fc.record({ key: fc.constantFrom('host', 'Host', ':authority'), raw: fc.constantFrom<Text>('elsewhere.example', FROM_EXTPROC) })),
);

const extProcHeaderArb: fc.Arbitrary<ExtProcHeader> = fc.oneof(w(4, cleanExtProcHeaderArb), w(1, oddExtProcHeaderArb));

const mutationArb: fc.Arbitrary<ExtProcMutation> = fc.record({
  set: fc.array(extProcHeaderArb, { maxLength: 2 }),
  remove: fc.array(fc.oneof(w(4, fc.constantFrom('x-remove-me', 'x-ate-target-port', 'cookie')), w(1, fc.constantFrom('host', ':path', 'content-length', 'connection', '', 'bad name', ':authority'))), { maxLength: 2 }),
});

export const extProcAnswerArb: fc.Arbitrary<ExtProcAnswer> = fc.oneof(
  w(
    8,
    fc.record({
      kind: fc.oneof(w(6, fc.constant('match' as const)), w(1, fc.constantFrom('headers' as const, 'body' as const, 'response-headers' as const))),
      status: fc.constantFrom('CONTINUE', 'CONTINUE', 'CONTINUE_AND_REPLACE'),
      mutation: fc.option(mutationArb, { nil: undefined }),
      bodyMutation: fc.constantFrom('none', 'none', 'replace', 'clear'),
      route: fc.constantFrom<RouteChoice>('worker', 'worker', 'worker', 'worker-localhost', 'worker-v6', 'refused', 'garbage', 'none'),
      metadataShape: fc.constantFrom('string', 'string', 'string', 'number', 'other-namespace'),
      modeOverride: fc.boolean(),
      timeoutOverride: fc.oneof(w(5, fc.constant(false)), w(1, fc.constant(true))),
    }),
  ),
  w(
    3,
    fc.record({
      kind: fc.constant('immediate' as const),
      code: fc.constantFrom<string | number | undefined>(200, 302, 403, 404, 418, 503, 599, 0, 99, 100, 600, 1000, 'NotFound', 'OK', 'Empty', undefined),
      mutation: fc.option(mutationArb, { nil: undefined }),
      body: fc.constantFrom('', 'denied', 'x'.repeat(100)),
      grpcStatus: fc.option(fc.constantFrom(0, 7, 14, 99), { nil: undefined }),
    }),
  ),
  w(1, fc.record({ kind: fc.constant('streamed-immediate' as const), code: fc.constantFrom('200', '503', '999', ''), body: fc.constantFrom('', 'streamed') })),
  w(1, fc.constant({ kind: 'empty' } as const)),
  w(1, fc.constantFrom({ kind: 'ignore' } as const, { kind: 'end-ok' } as const, { kind: 'fail' } as const)),
);

export interface ExtProcCase {
  readonly request: ClientRequest;
  /** The answers to the messages ext_proc receives in this case, in order (then routes to the worker). */
  readonly answers: readonly ExtProcAnswer[];
}

export const extProcCaseArb: fc.Arbitrary<ExtProcCase> = fc.record({
  request: clientRequestArb,
  answers: fc.array(extProcAnswerArb, { minLength: 1, maxLength: 3 }),
});
