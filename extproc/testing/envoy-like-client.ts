/**
 * A gRPC ext_proc client that behaves like Envoy's ext_proc filter with its default configuration, for tests:
 * one Process stream per HTTP request; header keys lower-case and values only in `raw_value` (`value` empty);
 * `protocol_config` and an empty `metadata_context` in the first message; after a CONTINUE for the request headers a
 * `response_headers` message (`:status`); then a half-close followed at once by a cancel (Envoy's legacy close).
 */
import * as grpc from '@grpc/grpc-js';
import { externalProcessorService } from '../protocol.js';

export interface EnvoyLikeRequest {
  /** The `:authority` value; undefined leaves `:authority` out (then `host` may be given in `headers`). */
  readonly authority?: string;
  readonly method?: string;
  readonly path?: string;
  /** Extra request headers (lower-case names), sent after the pseudo-headers. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Put header values in `value` instead of `raw_value` (an older data plane). Default false. */
  readonly legacyValues?: boolean;
  /** The status sent in the response_headers message (default 200). */
  readonly responseStatus?: number;
  /** Send response_headers after a CONTINUE (default true, like Envoy's default processing mode). */
  readonly sendResponseHeaders?: boolean;
  /** Aborting cancels the stream at once (a client that goes away). */
  readonly signal?: AbortSignal;
  /**
   * How the stream ends once the answers are in. `legacy` (default): half-close, then cancel at once, as Envoy does
   * unless configured otherwise. `graceful`: half-close and wait for the server to end the RPC (Envoy's
   * `ext_proc_graceful_grpc_close`); no RST_STREAM is sent.
   */
  readonly close?: 'legacy' | 'graceful';
  /** Initial metadata of the stream (Envoy sends none by default; the actor-edge proxy sends its budget). */
  readonly metadata?: Readonly<Record<string, string>>;
  /**
   * Attributes sent with the request headers under `envoy.filters.http.ext_proc`, as google.protobuf.Struct fields in
   * proto-loader's form (`{ 'xds.listener_direction': { numberValue: 2 } }`); none by default, as Envoy sends.
   */
  readonly attributes?: Readonly<Record<string, unknown>>;
}

export interface SetHeader {
  /** `raw_value` decoded as UTF-8. */
  readonly rawValue: string;
  /** The `value` field (must stay empty for Envoy >= 1.32). */
  readonly value: string;
  /** `append.value`, or undefined when `append` is unset. */
  readonly append: boolean | undefined;
}

export type ExtProcVerdict =
  | {
      readonly kind: 'continue';
      readonly setHeaders: Readonly<Record<string, SetHeader>>;
      readonly removeHeaders: readonly string[];
      /** dynamic_metadata as namespace → key → string value (a number as its decimal text). */
      readonly metadata: Readonly<Record<string, Readonly<Record<string, string>>>>;
      readonly clearRouteCache: boolean;
    }
  | {
      readonly kind: 'immediate';
      readonly status: number;
      readonly headers: Readonly<Record<string, SetHeader>>;
      readonly body: string;
      readonly details: string;
    };

export interface EnvoyLikeResult {
  readonly verdict: ExtProcVerdict;
  /** Every ProcessingResponse received, in order (decoded). */
  readonly responses: readonly DecodedResponse[];
}

/** A ProcessingResponse as decoded by proto-loader (snake_case fields, `response` names the oneof member). */
export type DecodedResponse = Record<string, any>;
type Decoded = DecodedResponse;

/** Reads one stream's responses in order, one `next()` at a time. */
export class ResponseReader {
  private readonly buffered: Decoded[] = [];
  private readonly waiting: { resolve: (m: Decoded) => void; reject: (e: Error) => void }[] = [];
  private failure: Error | undefined;

  constructor(call: grpc.ClientDuplexStream<unknown, Decoded>) {
    call.on('data', (m: Decoded) => {
      const w = this.waiting.shift();
      if (w) w.resolve(m);
      else this.buffered.push(m);
    });
    const fail = (e: Error): void => {
      this.failure ??= e;
      for (const w of this.waiting.splice(0)) w.reject(e);
    };
    call.on('error', (e: grpc.ServiceError) => fail(e));
    call.on('end', () => fail(new Error('stream ended')));
  }

  next(): Promise<Decoded> {
    const m = this.buffered.shift();
    if (m) return Promise.resolve(m);
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.waiting.push({ resolve, reject }));
  }
}

function header(key: string, value: string, legacy: boolean): Record<string, unknown> {
  return legacy ? { key, value } : { key, raw_value: Buffer.from(value, 'utf8') };
}

function decodeSetHeaders(mutation: Decoded | null | undefined): Record<string, SetHeader> {
  const out: Record<string, SetHeader> = {};
  for (const opt of (mutation?.set_headers ?? []) as Decoded[]) {
    const h = opt.header ?? {};
    out[h.key] = {
      rawValue: h.raw_value ? Buffer.from(h.raw_value).toString('utf8') : '',
      value: h.value ?? '',
      append: opt.append ? Boolean(opt.append.value) : undefined,
    };
  }
  return out;
}

function structString(value: Decoded | undefined): string | undefined {
  const v = value?.stringValue ?? value?.string_value;
  if (typeof v === 'string') return v;
  const n = value?.numberValue ?? value?.number_value;
  return typeof n === 'number' && value?.kind === 'numberValue' ? String(n) : undefined;
}

function decodeMetadata(struct: Decoded | null | undefined): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const [ns, value] of Object.entries((struct?.fields ?? {}) as Record<string, Decoded>)) {
    const inner = (value.structValue ?? value.struct_value)?.fields ?? {};
    out[ns] = {};
    for (const [k, v] of Object.entries(inner as Record<string, Decoded>)) {
      const s = structString(v);
      if (s !== undefined) out[ns][k] = s;
    }
  }
  return out;
}

/** Interprets the answer to a request_headers message the way Envoy would. */
export function verdictOf(response: Decoded): ExtProcVerdict {
  if (response.response === 'immediate_response') {
    const ir = response.immediate_response;
    const code = ir.status?.code;
    return {
      kind: 'immediate',
      status: typeof code === 'number' ? code : Number(envoyStatusCode(code)),
      headers: decodeSetHeaders(ir.headers),
      body: ir.body ? Buffer.from(ir.body).toString('utf8') : '',
      details: ir.details ?? '',
    };
  }
  if (response.response !== 'request_headers') throw new Error(`expected request_headers or immediate_response, got ${response.response}`);
  const common = response.request_headers.response ?? {};
  return {
    kind: 'continue',
    setHeaders: decodeSetHeaders(common.header_mutation),
    removeHeaders: common.header_mutation?.remove_headers ?? [],
    metadata: decodeMetadata(response.dynamic_metadata),
    clearRouteCache: Boolean(common.clear_route_cache),
  };
}

/** envoy.type.v3.StatusCode names decode as strings; map the ones the server uses back to numbers. */
function envoyStatusCode(name: string): number {
  const known: Record<string, number> = {
    OK: 200, BadRequest: 400, Unauthorized: 401, Forbidden: 403, NotFound: 404, RequestTimeout: 408,
    MisdirectedRequest: 421, TooManyRequests: 429, InternalServerError: 500, BadGateway: 502,
    ServiceUnavailable: 503, GatewayTimeout: 504,
  };
  return known[name] ?? NaN;
}

export class EnvoyLikeClient {
  readonly client: grpc.Client & { Process(metadata?: grpc.Metadata): grpc.ClientDuplexStream<unknown, Decoded> };

  /** `credentials`: plaintext by default; the mTLS tests pass grpc-js's own TLS credentials. */
  constructor(address: string, credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure()) {
    const Ctor = externalProcessorService();
    this.client = new Ctor(address, credentials) as unknown as EnvoyLikeClient['client'];
  }

  /** Opens a raw Process stream (for tests that script messages themselves). `status` settles when the RPC ends. */
  open(metadata: Readonly<Record<string, string>> = {}): { call: grpc.ClientDuplexStream<unknown, Decoded>; reader: ResponseReader; status: Promise<grpc.StatusObject> } {
    const md = new grpc.Metadata();
    for (const [k, v] of Object.entries(metadata)) md.set(k, v);
    const call = this.client.Process(md);
    const reader = new ResponseReader(call);
    const status = new Promise<grpc.StatusObject>((resolve) => call.on('status', resolve));
    call.on('error', () => {}); // CANCELLED after our own cancel is expected
    return { call, reader, status };
  }

  /** The request-headers message Envoy would send first on a stream. */
  static requestHeadersMessage(req: EnvoyLikeRequest): Record<string, unknown> {
    const legacy = req.legacyValues ?? false;
    const list = [];
    if (req.authority !== undefined) list.push(header(':authority', req.authority, legacy));
    list.push(header(':path', req.path ?? '/', legacy), header(':method', req.method ?? 'GET', legacy), header(':scheme', 'http', legacy));
    for (const [k, v] of Object.entries(req.headers ?? {})) list.push(header(k, v, legacy));
    list.push(header('x-request-id', `req-${Math.random().toString(16).slice(2)}`, legacy));
    return {
      request_headers: { headers: { headers: list }, end_of_stream: true },
      metadata_context: {},
      protocol_config: { request_body_mode: 'NONE', response_body_mode: 'NONE' },
      ...(req.attributes === undefined ? {} : { attributes: { 'envoy.filters.http.ext_proc': { fields: req.attributes } } }),
    };
  }

  /** One HTTP request's worth of ext_proc traffic, as Envoy sends it. */
  async process(req: EnvoyLikeRequest): Promise<EnvoyLikeResult> {
    const { call, reader, status } = this.open(req.metadata);
    const onAbort = (): void => call.cancel();
    if (req.signal?.aborted) call.cancel();
    req.signal?.addEventListener('abort', onAbort, { once: true });
    const responses: DecodedResponse[] = [];
    try {
      call.write(EnvoyLikeClient.requestHeadersMessage(req));
      const first = await reader.next();
      responses.push(first);
      const verdict = verdictOf(first);
      if (verdict.kind === 'continue' && (req.sendResponseHeaders ?? true)) {
        const legacy = req.legacyValues ?? false;
        call.write({
          response_headers: { headers: { headers: [header(':status', String(req.responseStatus ?? 200), legacy)] }, end_of_stream: false },
          metadata_context: {},
        });
        const second = await reader.next();
        responses.push(second);
        if (second.response !== 'response_headers') throw new Error(`expected response_headers, got ${second.response}`);
      }
      return { verdict, responses };
    } finally {
      req.signal?.removeEventListener('abort', onAbort);
      call.end();
      if (req.close === 'graceful' && !req.signal?.aborted) await status;
      else call.cancel();
    }
  }

  close(): void {
    this.client.close();
  }
}
