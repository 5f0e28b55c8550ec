/**
 * One request's ext_proc stream as Envoy fills it: the first message carries `protocol_config` and the configured
 * `request_attributes`; every message carries `metadata_context` (the forwarding namespaces the request has,
 * often empty). Answers' dynamic metadata is kept per receiving namespace. Time spent waiting is added to the
 * request's `extProc.elapsedMs`; a value-only header from the processor is logged once per stream.
 */
import { performance } from 'node:perf_hooks';
import { SpanKind } from '@opentelemetry/api';
import { ATTR_RPC_METHOD, ATTR_RPC_SYSTEM_NAME } from '../../../lib/tracing/semconv.js';
import { EXT_PROC_SERVICE } from '../../../lib/wire-contract.js';
import type { ProxyRequest } from '../../request/context.js';
import type { Span } from '@opentelemetry/api';
import type { MessageResult, ExtProcStream } from './client.js';
import { requestAttributes } from './attributes.js';
import { protocolConfig } from './translate.js';
import type { ProcessingRequest, ProcessingResponse } from './messages.js';
import { forwardedMetadata, receiveMetadata, type RequestMetadata } from './metadata.js';
import type { MutationResult } from './mutation.js';
import type { ExtProcRequestState } from './request-state.js';
import type { BodyMode, ExtProcSettings } from './settings.js';

/** The ext_proc stream's span name: the gRPC method, as the RPC semantic conventions name client spans. */
export const PROCESS_SPAN = `${EXT_PROC_SERVICE}/Process`;

export class Conversation {
  #stream: ExtProcStream | undefined;
  #first = true;
  #warnedValueOnly = false;
  readonly metadata: RequestMetadata = new Map();

  constructor(
    readonly ctx: ProxyRequest,
    /**
     * Opens the stream, lazily: on the first message that needs sending (none at all when every phase is skipped);
     * with tracing on, with the stream's span.
     */
    private readonly open: (span?: Span) => ExtProcStream,
    readonly settings: ExtProcSettings,
    readonly state: ExtProcRequestState,
    /** The request body mode announced in `protocol_config`. */
    readonly requestBodyMode: BodyMode,
  ) {}

  /** Sends `message` (decorated as Envoy does) and waits for the answer. */
  async roundTrip(message: ProcessingRequest): Promise<MessageResult> {
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
    const stream = (this.#stream ??= this.#openStream());
    this.state.stream = stream;
    const startedAt = performance.now();
    try {
      return await stream.roundTrip(full, this.ctx.signal);
    } finally {
      this.state.elapsedMs += performance.now() - startedAt;
    }
  }

  #openStream(): ExtProcStream {
    const trace = this.ctx.trace;
    if (trace === undefined) return this.open();
    return this.open(trace.child(PROCESS_SPAN, SpanKind.CLIENT, { [ATTR_RPC_SYSTEM_NAME]: 'grpc', [ATTR_RPC_METHOD]: PROCESS_SPAN }));
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
