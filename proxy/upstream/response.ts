/**
 * An upstream answer as the router hands it to the chain: the status and the headers as relayed (hop-by-hop and
 * the stale signal already removed), the worker's `Trailer` declaration, and the body — paused until the chain
 * pipes it into a sink (the response writer), so the chain can run the response phase first. An upgrade answer
 * (101) carries the worker's socket instead of a body. The router writes nothing to the client itself.
 */
import type { Socket } from 'node:net';
import { ResponseOutcome, type UpstreamFailure } from './outcome.js';

/** Receives an upstream body: chunks (false: pause until `UpstreamBody.resume`), then its end or its failure. */
export interface BodySink {
  data(chunk: Buffer): boolean;
  /** The body is complete; `trailers` as the worker sent them (a flat `[name, value, ...]` list, or null). */
  end(trailers: readonly (Buffer | string)[] | null): void;
  /** The upstream broke mid-body. */
  error(err: Error): void;
}

/** The body of an upstream answer, flowing only once piped. */
export interface UpstreamBody {
  /** Starts the body flowing into `sink` (what arrived before is delivered first). Once only. */
  pipe(sink: BodySink): void;
  /** Resumes a body the sink paused (its `data` answered false). */
  resume(): void;
  /** Stops the upstream request (the response is replaced, or the client left); the sink hears nothing more. */
  abort(reason: string): void;
  /**
   * How the upstream failed after its head but before the body was piped (the chain was still deciding): such
   * a failure is an outcome of its own (a reset), since nothing was written to the client yet.
   */
  failure(): UpstreamFailure | undefined;
}

/** The worker's socket after a 101, with the pool slot it holds until the tunnel closes. */
export interface UpgradedSocket {
  readonly socket: Socket;
  release(): void;
}

export class UpstreamResponse extends ResponseOutcome {
  constructor(
    status: number,
    headers: string[],
    /** The worker's `Trailer` header values, comma-joined (undefined: none). */
    readonly trailer: string | undefined,
    readonly body: UpstreamBody,
    /** Set on a 101: the upgraded socket (there is no body then). */
    readonly upgraded: UpgradedSocket | undefined,
  ) {
    super(status, headers);
  }

  /** The relayed header list, writable (the response phase's copy-on-write starts from it). */
  get headerList(): string[] {
    return this.list as string[];
  }
}

/** Any attempt's result: an answer, or a failure before any answer. */
export type UpstreamAttemptResult = UpstreamResponse | UpstreamFailure;
