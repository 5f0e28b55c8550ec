/**
 * `streamed_immediate_response` (ext_proc API 2026-01; Envoy's streaming local response): in answer to the
 * request headers, the processor starts a local reply with `headers_response` (which must carry `:status`), may
 * follow with `body_response` chunks, and ends it with `end_of_stream` on the head or a chunk, or with
 * `trailers_response`. As Envoy, it is accepted only where the protocol allows it: request headers sent (the
 * message answers them) and request body mode NONE (FULL_DUPLEX_STREAMED, the other allowed mode, is not supported
 * by this proxy); in any other mode it is refused with a clear reason (a spurious answer: 500, or with
 * `failure_mode_allow` the request continues unprocessed). Nothing is forwarded upstream: the request body, if any,
 * is not read.
 *
 * The head's headers go through the filter's mutation rules, as an immediate response's do; an invalid head is
 * 500 before anything is written. Chunks are written to the client as they arrive, one at a time (the client's
 * backpressure holds the processor back through the stream's flow control), each within the message timeout. A
 * stream that ends, fails or stalls before the end resets the client's response, whose head is already out.
 */
import type { LocalReply, StreamedBody, StreamedPiece } from '../../api/filter.js';
import type { ExtProcStream } from './client.js';
import type { Conversation } from './conversation.js';
import { headerValueOf, type HeaderMapMessage, type ProcessingResponse } from './messages.js';
import { applyMutation, ResponseHeadTarget } from './mutation.js';
import type { ProcessingMode } from './settings.js';
import { validateHeaderName, validateHeaderValue } from 'node:http';

/** What a streamed immediate response made of the request. */
export type StreamedReplyResult =
  | { readonly kind: 'reply'; readonly reply: LocalReply }
  /** Not allowed in this configuration: handled as a spurious answer. */
  | { readonly kind: 'unsupported'; readonly details: string }
  /** Allowed, but malformed: always an error (500), as an invalid mutation. */
  | { readonly kind: 'invalid'; readonly details: string };

/** The streamed reply an answer to the request headers starts, in processing `mode`. */
export function streamedReply(conv: Conversation, msg: ProcessingResponse, mode: ProcessingMode): StreamedReplyResult {
  if (mode.requestBodyMode !== 'NONE') {
    return {
      kind: 'unsupported',
      details: `streamed_immediate_response needs request_body_mode NONE (FULL_DUPLEX_STREAMED is not supported); this request's is ${mode.requestBodyMode}`,
    };
  }
  const head = msg.streamed_immediate_response?.headers_response;
  if (head == null) return { kind: 'invalid', details: 'a streamed_immediate_response must start with headers_response' };
  conv.receive(msg);
  const target = new ResponseHeadTarget(0, []);
  const setHeaders = (head.headers?.headers ?? []).map((header) => ({ header, append: { value: true } }));
  const mutation = applyMutation(target, { set_headers: setHeaders }, conv.settings.mutationRules);
  conv.noteMutation(mutation);
  if (mutation.error !== undefined) return { kind: 'invalid', details: `streamed_immediate_response head: ${mutation.error}` };
  if (target.status === 0) return { kind: 'invalid', details: 'streamed_immediate_response head has no :status' };
  const headers: Record<string, string> = {};
  for (let i = 0; i < target.headers.length; i += 2) {
    const name = (target.headers[i] as string).toLowerCase();
    const value = target.headers[i + 1] as string;
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const details = 'ext_proc streamed immediate response';
  if (head.end_of_stream === true) {
    conv.close();
    return { kind: 'reply', reply: { status: target.status, headers, details } };
  }
  const stream = conv.detach();
  if (stream === undefined) return { kind: 'invalid', details: 'streamed_immediate_response without a stream' };
  return { kind: 'reply', reply: { status: target.status, headers, body: new ExtProcStreamedBody(stream, conv.ctx.signal), details } };
}

/** Trailers from a `trailers_response`; an error text for a name or value a response cannot carry. */
function trailersOf(map: HeaderMapMessage): Record<string, string> | string {
  const out: Record<string, string> = {};
  for (const h of map.headers ?? []) {
    const name = h.key.toLowerCase();
    const { value } = headerValueOf(h);
    try {
      if (name.startsWith(':')) throw new Error('pseudo-header');
      validateHeaderName(name);
      validateHeaderValue(name, value);
    } catch {
      return `invalid trailer "${h.key}"`;
    }
    out[name] = out[name] === undefined ? value : `${out[name]}, ${value}`;
  }
  return out;
}

/** The body of a streamed immediate response, read from the rest of its ext_proc stream. */
export class ExtProcStreamedBody implements StreamedBody {
  readonly kind = 'streamed';
  #ended = false;

  constructor(
    private readonly stream: ExtProcStream,
    private readonly signal: AbortSignal | undefined,
  ) {}

  async next(): Promise<StreamedPiece> {
    if (this.#ended) return { kind: 'end' };
    const result = await this.stream.receive(this.signal);
    if (result.kind !== 'response') {
      const why =
        result.kind === 'closed'
          ? 'the processor ended the stream before the end of the response'
          : result.kind === 'error'
            ? `ext_proc_error_gRPC_error_${result.code}{${result.details}}`
            : result.kind === 'timeout'
              ? 'no next piece within the message timeout'
              : 'the client went away';
      return this.#fail(why);
    }
    const piece = result.response.streamed_immediate_response;
    if (piece?.body_response != null) {
      if (piece.body_response.end_of_stream === true) this.#ended = true;
      return { kind: 'data', data: piece.body_response.body ?? new Uint8Array(0) };
    }
    if (piece?.trailers_response != null) {
      const trailers = trailersOf(piece.trailers_response);
      if (typeof trailers === 'string') return this.#fail(trailers);
      this.#ended = true;
      return { kind: 'end', trailers };
    }
    return this.#fail(`expected a body_response or trailers_response, got ${result.response.response ?? 'another message'}`);
  }

  #fail(details: string): StreamedPiece {
    this.#ended = true;
    return { kind: 'error', details };
  }

  cancel(): void {
    this.#ended = true;
    this.stream.close();
  }
}
