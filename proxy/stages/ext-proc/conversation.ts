/**
 * One request's ext_proc stream as Envoy fills it: the first message carries `protocol_config` and the configured
 * `request_attributes`; every message carries `metadata_context` (the forwarding namespaces the request has,
 * often empty). Answers' dynamic metadata is kept per receiving namespace. Time spent waiting is added to the
 * request's `extProc.elapsedMs`; a value-only header from the processor is logged once per stream.
 */
import { performance } from 'node:perf_hooks';
import type { ProxyRequest } from '../../request/context.js';
import type { ExchangeResult, ExtProcStream } from './client.js';
import { requestAttributes } from './attributes.js';
import { protocolConfig } from './translate.js';
import type { ProcessingRequest, ProcessingResponse } from './messages.js';
import { forwardedMetadata, receiveMetadata, type RequestMetadata } from './metadata.js';
import type { MutationResult } from './mutation.js';
import type { ExtProcRequestState } from './request-state.js';
import type { BodyMode, ExtProcSettings } from './settings.js';

export class Conversation {
  #stream: ExtProcStream | undefined;
  #first = true;
  #warnedValueOnly = false;
  readonly metadata: RequestMetadata = new Map();

  constructor(
    readonly ctx: ProxyRequest,
    /** Opens the stream, lazily: on the first message that needs sending (none at all when every phase is skipped). */
    private readonly open: () => ExtProcStream,
    readonly settings: ExtProcSettings,
    readonly state: ExtProcRequestState,
    /** The request body mode announced in `protocol_config`. */
    readonly requestBodyMode: BodyMode,
  ) {}

  /** Sends `message` (decorated as Envoy does) and waits for the answer. */
  async exchange(message: ProcessingRequest): Promise<ExchangeResult> {
    const s = this.settings;
    let full: ProcessingRequest = { ...message, metadata_context: forwardedMetadata(this.metadata, s.forwardingNamespaces) };
    if (this.#first) {
      this.#first = false;
      full = {
        ...full,
        protocol_config: protocolConfig(this.requestBodyMode),
        ...(s.requestAttributes.length > 0 ? { attributes: requestAttributes(this.ctx, s.requestAttributes) } : {}),
      };
    }
    const stream = (this.#stream ??= this.open());
    this.state.stream = stream;
    const startedAt = performance.now();
    try {
      return await stream.exchange(full, this.ctx.signal);
    } finally {
      this.state.elapsedMs += performance.now() - startedAt;
    }
  }

  /** Keeps the answer's receiving namespaces. */
  receive(answer: ProcessingResponse): void {
    const dropped = receiveMetadata(this.metadata, answer.dynamic_metadata, this.settings.receivingNamespaces);
    if (dropped > 0) this.ctx.log.debug({ dropped }, 'ext_proc dynamic metadata outside the receiving namespaces dropped');
  }

  /** Logs, once per stream, a processor that sends header values only in `value` (Envoy reads them as empty). */
  noteMutation(result: MutationResult): void {
    if (!result.valueOnly || this.#warnedValueOnly) return;
    this.#warnedValueOnly = true;
    this.ctx.log.warn('ext_proc server sent a header value only in `value`: it is read as empty (Envoy >= 1.32 reads only raw_value)');
  }

  /** Ends the stream and starts over: the next message opens a fresh stream and is decorated as a first message. */
  reopen(): void {
    this.close();
    this.#stream = undefined;
    this.#first = true;
  }

  /**
   * Hands the stream over to whoever reads the rest of it (a streamed immediate response): `close` leaves it open
   * from now on; it stays the request's stream, so the request's end closes it in any case.
   */
  detach(): ExtProcStream | undefined {
    const stream = this.#stream;
    this.#stream = undefined;
    return stream;
  }

  /** Ends the stream (nothing more will be sent). Idempotent. */
  close(): void {
    const stream = this.#stream;
    if (stream === undefined) return;
    if (this.state.stream === stream) this.state.stream = undefined;
    stream.close();
  }
}
