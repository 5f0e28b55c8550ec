/**
 * The egress listener's fuzz stack and cases. The stack: the proxy in this process with `--egress-listen` (and its
 * verdict cache on, as by default), a scripted ext_proc whose answer each case picks (the policy — the echo
 * destination allowed, anything else denied —, a denial of any outcome, a broken allow, a stream error, no answer),
 * an echo destination, and the decoy (denied by every answer: a connection to it is a finding). The cases: HTTP/1.1 heads (CONNECT with generated authorities,
 * other methods, versions, fields, truncated or pipelined heads, bytes past the head) and HTTP/2 header blocks
 * (classic and extended CONNECT, other methods, noisy blocks, through node's client or as raw frames), each with an
 * actor certificate, one from another CA, or none, and a way to leave (end, reset, or just close).
 */
import fc from 'fast-check';
import type { TLSSocket } from 'node:tls';
import { EGRESS_OUTCOMES, type EgressOutcome } from '../../../lib/egress/wire.js';
import { Decoy } from '../fuzz/decoy.js';
import { expand, h2FieldsArb, type Text } from '../fuzz/arbitraries.js';
import type { FuzzStack } from '../fuzz/fuzz-target.js';
import { startScriptedExtProc, type ScriptedExtProc } from '../helpers.js';
import type { ProcessingResponse } from '../../stages/ext-proc/messages.js';
import { startTestProxy, type InProcessTestProxy } from '../proxy.js';
import { egressDestinationOf } from '../../egress/destination.js';
import { resetConnection, startEcho, tlsConnect, type Destination, type EgressTarget } from '../../egress/testing/egress-clients.js';
import { egressPki, type ClientCredentials } from '../../egress/testing/egress-pki.js';
import { allowAnswer, hostnamesAnswer, outcomeAnswer } from './egress-rig.js';

/** How ext_proc answers a case's CONNECTs. */
export type AnswerMode =
  | { readonly kind: 'policy' }
  | { readonly kind: 'deny'; readonly outcome: Exclude<EgressOutcome, 'allowed'> }
  | { readonly kind: 'broken'; readonly which: number }
  | { readonly kind: 'fail' }
  | { readonly kind: 'silent' };

export type Creds = 'actor' | 'other-ca' | 'none';

export interface EgressStack extends FuzzStack {
  readonly proxy: InProcessTestProxy;
  readonly extproc: ScriptedExtProc;
  readonly echo: Destination;
  readonly target: EgressTarget;
  readonly creds: Readonly<Record<Creds, ClientCredentials | undefined>>;
  /** The answer mode of the case being sent. */
  mode: AnswerMode;
  /** When ext_proc last allowed the echo destination (a cached allow may open a tunnel for up to the TTL). */
  allowedAt: number;
}

/** Answers that look like an allow and are not one: each must be 503, never a tunnel. */
const BROKEN: readonly ProcessingResponse[] = [
  { request_headers: { response: { status: 'CONTINUE' } } },
  { request_headers: { response: { status: 'CONTINUE_AND_REPLACE' } }, dynamic_metadata: allowAnswer().dynamic_metadata ?? null },
  allowAnswer(-1),
  { immediate_response: { status: { code: 200 }, details: EGRESS_OUTCOMES.allowed.details } },
  { immediate_response: { status: { code: 200 }, details: 'something' } },
  { response_headers: { response: {} } },
  {},
  hostnamesAnswer('[]'),
  hostnamesAnswer('[{"rule":0,"hostnames":["*.*.example.com"]}]'),
];

/** The extproc timeout the stack runs with (a silent ext_proc costs a case this long). */
const EXTPROC_TIMEOUT_MS = 300;
/** The verdict cache's TTL the stack runs with. */
const CACHE_TTL_MS = 1000;

export async function startEgressStack(): Promise<EgressStack> {
  const pki = await egressPki();
  const decoy = await Decoy.start();
  const echo = await startEcho();
  const stack = { mode: { kind: 'policy' } as AnswerMode, allowedAt: Number.NEGATIVE_INFINITY } as { mode: AnswerMode; allowedAt: number };
  const extproc = await startScriptedExtProc((m) => {
    const mode = stack.mode;
    switch (mode.kind) {
      case 'policy':
        if (m.headers[':authority'] !== echo.address) return outcomeAnswer('denied');
        stack.allowedAt = Date.now();
        return allowAnswer();
      case 'deny':
        return outcomeAnswer(mode.outcome);
      case 'broken':
        return BROKEN[mode.which % BROKEN.length] as ProcessingResponse;
      case 'fail':
        return 'fail';
      case 'silent':
        return 'ignore';
    }
  });
  const proxy = await startTestProxy({
    mode: 'in-process',
    extproc: extproc.address,
    args: [
      '--egress-listen', '127.0.0.1:0',
      '--egress-tls-cert', pki.server.certFile,
      '--egress-tls-key', pki.server.keyFile,
      '--egress-client-ca', pki.actorCaFile,
      '--egress-extproc-timeout-ms', String(EXTPROC_TIMEOUT_MS),
      '--egress-connect-timeout-ms', '1000',
      '--egress-max-tunnels-per-actor', '3',
      '--egress-cache-ttl-ms', String(CACHE_TTL_MS),
      '--headers-timeout-ms', '1500',
      // A connection node stopped serving after a connection error (GOAWAY sent, nothing read or written since)
      // is found by its unanswered PING: within twice this.
      '--keep-alive-timeout-ms', '750',
    ],
  });
  const address = proxy.addresses.egress as string;
  const at = address.lastIndexOf(':');
  return Object.assign(stack, {
    proxy,
    decoy,
    extproc,
    echo,
    target: { host: address.slice(0, at), port: Number(address.slice(at + 1)), ca: pki.serverCa },
    creds: { actor: await pki.actor('team', 'fuzz'), 'other-ca': pki.otherCa, none: undefined },
    async close() {
      await proxy.stop();
      await extproc.close();
      await echo.close();
      await decoy.close();
      await pki.close();
    },
  });
}

const w = <T>(weight: number, arbitrary: fc.Arbitrary<T>): fc.WeightedArbitrary<T> => ({ weight, arbitrary });

export const answerModeArb: fc.Arbitrary<AnswerMode> = fc.oneof(
  w(6, fc.constant({ kind: 'policy' } as const)),
  w(2, fc.constantFrom(...(Object.keys(EGRESS_OUTCOMES).filter((o) => o !== 'allowed') as Exclude<EgressOutcome, 'allowed'>[])).map((outcome) => ({ kind: 'deny', outcome }) as const)),
  w(2, fc.nat(BROKEN.length - 1).map((which) => ({ kind: 'broken', which }) as const)),
  w(1, fc.constant({ kind: 'fail' } as const)),
  w(1, fc.constant({ kind: 'silent' } as const)),
);

export const credsArb: fc.Arbitrary<Creds> = fc.oneof(w(6, fc.constant('actor' as const)), w(1, fc.constant('other-ca' as const)), w(1, fc.constant('none' as const)));

/** CONNECT authorities: the echo destination (allowed by the policy), the decoy, and everything that is not IP:port. */
export function egressAuthorityArb(echo: string, decoy: string): fc.Arbitrary<Text> {
  const port = (a: string): string => a.slice(a.lastIndexOf(':') + 1);
  return fc.oneof(
    w(6, fc.constant(echo)),
    w(3, fc.constantFrom(decoy, `[::1]:${port(decoy)}`, `127.000.0.1:${port(echo)}`, `127.0.0.1:0${port(echo)}`, `[::ffff:127.0.0.1]:${port(decoy)}`)),
    w(2, fc.constantFrom('localhost:443', 'example.com:443', '127.0.0.1', '127.0.0.1:', '127.0.0.1:0', '127.0.0.1:65536', `127.0.0.1:${port(echo)} `, '[::1', '::1:80', '', ' ', '*', '/', `http://${echo}`, `user@${echo}`, '%31%32%37.0.0.1:80', '[fe80::1%25eth0]:80')),
    w(1, fc.constantFrom<Text>({ repeat: '1', times: 10_240 }, { repeat: '[::', times: 3000 }, { repeat: 'a.', times: 5000 })),
    w(1, fc.string({ maxLength: 70 })),
    w(1, fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 70_000 })).map(([ip, p]) => `${ip}:${p}`)),
  );
}

/** One HTTP/1.1 case: the bytes of the head(s), then (after a 200) the tunnel's bytes, and how the client leaves. */
export interface H1Case {
  readonly protocol: 'http/1.1';
  readonly creds: Creds;
  readonly mode: AnswerMode;
  /** CONNECT's authority when the head is a CONNECT (for the oracle), else undefined. */
  readonly connectTo: string | undefined;
  readonly head: Text;
  readonly payload: string;
  readonly leave: 'end' | 'reset' | 'close';
}

export interface H2Case {
  readonly protocol: 'h2';
  readonly creds: Creds;
  readonly mode: AnswerMode;
  readonly via: 'node' | 'raw';
  readonly streams: readonly { readonly fields: readonly (readonly [string, Text])[]; readonly body: string | undefined }[];
}

export type EgressCase = H1Case | H2Case;

const fieldLine = fc.oneof(
  fc.constantFrom('Host: 127.0.0.1', 'Proxy-Authorization: Basic eDp5', 'Content-Length: 0', 'Content-Length: 5', 'Transfer-Encoding: chunked', 'Connection: close', 'Upgrade: h2c', 'Expect: 100-continue', 'X: \u0000', 'Bad Header: x', ': nothing', 'Host: a\r\nHost: b'),
  fc.tuple(fc.stringMatching(/^[A-Za-z-]{1,12}$/), fc.string({ maxLength: 20 })).map(([n, v]) => `${n}: ${v.replace(/[\r\n]/g, '')}`),
);

export function h1CaseArb(echo: string, decoy: string): fc.Arbitrary<H1Case> {
  const authority = egressAuthorityArb(echo, decoy);
  const method = fc.oneof(w(8, fc.constant('CONNECT')), w(2, fc.constantFrom('GET', 'POST', 'connect', 'HEAD', 'PRI', 'OPTIONS', 'CONNECT ')), w(1, fc.stringMatching(/^[A-Z]{1,8}$/)));
  const version = fc.oneof(w(8, fc.constant('HTTP/1.1')), w(1, fc.constantFrom('HTTP/1.0', 'HTTP/2.0', 'HTTP/1.1 x', 'http/1.1', '')));
  const ending = fc.oneof(w(8, fc.constant('\r\n\r\n')), w(1, fc.constantFrom('\n\n', '\r\n', '', '\r\n\r\nCONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n', '\r\n\r\nGET / HTTP/1.1\r\n\r\n')));
  return fc
    .record({
      creds: credsArb,
      mode: answerModeArb,
      method,
      authority,
      version,
      fields: fc.array(fieldLine, { maxLength: 3 }),
      ending,
      early: fc.oneof(w(4, fc.constant('')), w(1, fc.string({ maxLength: 40 }))),
      garbage: fc.oneof(w(12, fc.constant(undefined)), w(1, fc.uint8Array({ minLength: 1, maxLength: 200 }).map((b) => Buffer.from(b).toString('latin1')))),
      payload: fc.oneof(w(3, fc.string({ minLength: 1, maxLength: 100 })), w(1, fc.constantFrom('x'.repeat(100_000), '\u0000\r\n\r\n'))),
      leave: fc.constantFrom<H1Case['leave']>('end', 'reset', 'close'),
    })
    .map((r): H1Case => {
      const a = expand(r.authority);
      const head: Text = r.garbage ?? (typeof r.authority === 'string' ? `${r.method} ${a} ${r.version}${r.fields.map((f) => `\r\n${f}`).join('')}${r.ending}${r.early}` : `${r.method} ${a} ${r.version}\r\n\r\n`);
      // node reads a request line leniently (runs of spaces as one): the target is what it would read.
      const tokens = (expand(head).split('\r\n')[0] ?? '').split(' ').filter((t) => t !== '');
      const connectTo = r.garbage === undefined && tokens[0] === 'CONNECT' ? tokens[1] : undefined;
      return { protocol: 'http/1.1', creds: r.creds, mode: r.mode, connectTo, head, payload: r.payload, leave: r.leave };
    });
}

export function h2CaseArb(echo: string, decoy: string): fc.Arbitrary<H2Case> {
  const authority = egressAuthorityArb(echo, decoy);
  type Pair = readonly [string, Text];
  const connectFields: fc.Arbitrary<Pair[]> = fc.tuple(authority, fc.subarray<Pair>([[':path', '/'], [':scheme', 'https'], [':protocol', 'websocket']], { maxLength: 1 }), fc.array(fc.constantFrom<Pair>(['user-agent', 'fuzz'], ['content-length', '3'], ['host', echo], ['te', 'trailers'], ['proxy-authorization', 'x']), { maxLength: 2 })).map(([a, extra, rest]): Pair[] => [[':method', 'CONNECT'], [':authority', a], ...extra, ...rest]);
  const fields = fc.oneof(w(6, connectFields), w(2, h2FieldsArb({ actors: ['actor-000.demo.actors.example'], decoy })));
  return fc.record({
    protocol: fc.constant('h2' as const),
    creds: credsArb,
    mode: answerModeArb,
    via: fc.constantFrom<H2Case['via']>('node', 'raw'),
    streams: fc.array(fc.record({ fields, body: fc.option(fc.string({ minLength: 1, maxLength: 60 }), { nil: undefined }) }), { minLength: 1, maxLength: 4 }),
  });
}

/** The well-formed answers of the egress listener (status → body); node answers 400, 408, 413, 414, 431, 501 and 505 itself (a head it cannot read, or not in time), bodies of its own. */
const BODIES: Readonly<Record<number, readonly string[]>> = {
  403: ['invalid actor certificate', 'egress denied', 'unknown actor', 'actor is not running'],
  405: ['method not allowed'],
  408: ['request cancelled'],
  429: ['too many tunnels for this actor'],
  502: ['destination unreachable'],
  503: ['control plane unavailable', 'proxy draining'],
};
const NODE_STATUSES = new Set([400, 408, 413, 414, 431, 501, 505]);

/** Whether `authority` names the echo destination (what a 200 may open). */
export function namesEcho(authority: string, echo: string): boolean {
  return egressDestinationOf(authority)?.authority === echo;
}

/**
 * What the oracle requires of a 200: an actor certificate, the echo destination, and ext_proc's policy allowing it —
 * in this case, or within the cache's TTL (`allowedAt`). `caseStartedAt`: when the case began to be sent. Outside
 * the policy mode ext_proc allows nothing during the case, so a verdict that opened a tunnel was stored before it
 * began: the bound is judged from the case's start, not from when its answers were read (a slow case, a long header
 * block before the CONNECT, may be read seconds after its 200 arrived).
 */
export function tunnelProblem(c: { readonly creds: Creds; readonly mode: AnswerMode }, authority: string, echo: string, allowedAt: number, caseStartedAt: number): string | undefined {
  if (c.creds !== 'actor') return `a tunnel opened for a client with ${c.creds} certificate`;
  if (c.mode.kind !== 'policy' && caseStartedAt - allowedAt > CACHE_TTL_MS + 1000) return `a tunnel opened though ext_proc answered ${JSON.stringify(c.mode)} and allowed nothing within the cache's TTL`;
  if (!namesEcho(authority, echo)) return `a tunnel opened to ${JSON.stringify(authority.slice(0, 80))}, which the policy does not allow`;
  return undefined;
}

export interface H1Outcome {
  readonly status: number | undefined;
  readonly problems: string[];
}

/** Reads from `socket` until `until` holds for what arrived, it closes, or `ms` passes. */
function readUntil(socket: TLSSocket, until: (got: Buffer) => boolean, ms: number): Promise<Buffer> {
  return new Promise((resolve) => {
    let got = Buffer.alloc(0);
    const finish = (): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', finish);
      resolve(got);
    };
    const onData = (c: Buffer): void => {
      got = Buffer.concat([got, c]);
      if (until(got)) finish();
    };
    const timer = setTimeout(finish, ms);
    socket.on('data', onData);
    socket.once('close', finish);
    if (socket.destroyed) finish();
  });
}

/** Sends one HTTP/1.1 case and judges the answer. */
export async function sendH1Case(stack: EgressStack, c: H1Case): Promise<H1Outcome> {
  const startedAt = Date.now();
  const problems: string[] = [];
  let socket: TLSSocket;
  try {
    socket = await tlsConnect(stack.target, stack.creds[c.creds]);
  } catch (err) {
    return { status: undefined, problems: [`the TLS handshake failed: ${(err as Error).message}`] };
  }
  try {
    socket.write(expand(c.head));
    const headEnd = (b: Buffer): number => b.indexOf('\r\n\r\n');
    const first = await readUntil(socket, (b) => headEnd(b) !== -1, 5000);
    if (first.length === 0) return { status: undefined, problems }; // closed without an answer (node drops some malformed heads)
    const line = /^HTTP\/1\.1 (\d{3}) [^\r\n]*\r\n/.exec(first.toString('latin1'));
    if (line === null) {
      problems.push(`not an HTTP/1.1 answer: ${JSON.stringify(first.subarray(0, 80).toString('latin1'))}`);
      return { status: undefined, problems };
    }
    const status = Number(line[1]);
    if (status === 200) {
      const problem = c.connectTo === undefined ? 'a 200 to a request that is not a CONNECT' : tunnelProblem(c, c.connectTo, stack.echo.address, stack.allowedAt, startedAt);
      if (problem !== undefined) problems.push(problem);
      // The tunnel echoes: whatever was sent past the head, then the payload, comes back.
      const payload = Buffer.from(c.payload);
      const early = first.subarray(headEnd(first) + 4);
      const endsWithPayload = (b: Buffer): boolean => b.length >= payload.length && b.subarray(b.length - payload.length).equals(payload);
      socket.write(payload);
      const echoed = endsWithPayload(early) ? early : Buffer.concat([early, await readUntil(socket, (b) => endsWithPayload(Buffer.concat([early, b])), 5000)]);
      // A tunnel opened on a cached allow while ext_proc now denies is re-validated when the entry's TTL ends and
      // closed on the denial: then its echo may stop short, but the tunnel must have closed, not stalled.
      const revoked = c.mode.kind !== 'policy' && (socket.readableEnded || socket.destroyed);
      if (!endsWithPayload(echoed) && !revoked) problems.push(`the tunnel did not echo the ${payload.length} bytes sent through it (${echoed.length} bytes came back)`);
    } else {
      const known = NODE_STATUSES.has(status) ? undefined : BODIES[status];
      if (known === undefined && !NODE_STATUSES.has(status)) problems.push(`status ${status}`);
      if (known !== undefined) {
        const rest = await readUntil(socket, () => false, 3000); // the connection closes after a refusal
        const body = Buffer.concat([first.subarray(headEnd(first) + 4), rest]).toString('utf8');
        const head = expand(c.head).startsWith('HEAD '); // an answer to HEAD has no body
        if (head ? body !== '' : !known.includes(body)) problems.push(`status ${status} with body ${JSON.stringify(body.slice(0, 80))}`);
      }
    }
    return { status, problems };
  } finally {
    if (c.leave === 'reset') resetConnection(socket);
    else if (c.leave === 'end') socket.end();
    else socket.destroy();
  }
}
