/**
 * The grpc scenario's client: @grpc/grpc-js calls to the demo service every stub worker serves over h2c
 * (`proto/demo/echo.proto`, `actoredge.demo.Echo`), each timed from its start to its status. One caller is one
 * grpc-js channel, so one HTTP/2 connection to its address with every call it makes multiplexed on it; the
 * channel's `grpc.default_authority` names the actor, as a client of the ingress would.
 */
import * as grpc from '@grpc/grpc-js';
import { ECHO_SERVICE } from '../apiserver-stub/worker/demo-grpc.js';
import { loadProto, lookup } from '../lib/proto.js';

/** How one call ended: OK with every reply it asked for, or not (with the gRPC status code's name). */
export type CallOutcome =
  | { readonly kind: 'ok'; readonly startMs: number; readonly firstReplyMs: number | null; readonly endMs: number; readonly replies: number }
  | { readonly kind: 'failed'; readonly startMs: number; readonly firstReplyMs: number | null; readonly endMs: number; readonly code: string; readonly detail: string };

/** The call's duration as its client sees it: from its start to its status (any wait for the worker included). */
export function durationOf(o: CallOutcome): number {
  return o.endMs - o.startMs;
}

/** How long the call's replies were arriving: from its first reply to its status (0 without a reply). */
export function streamingOf(o: CallOutcome): number {
  return o.firstReplyMs === null ? 0 : o.endMs - o.firstReplyMs;
}

/** The status counts of a set of calls, by gRPC code name (`OK`, `UNAVAILABLE`, ...). */
export function codeCounts(outcomes: readonly CallOutcome[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const o of outcomes) {
    const code = o.kind === 'ok' ? 'OK' : o.code;
    out[code] = (out[code] ?? 0) + 1;
  }
  return out;
}

type UnaryCallback = (err: grpc.ServiceError | null, reply?: unknown) => void;
interface EchoClient extends grpc.Client {
  Echo(req: object, options: grpc.CallOptions, cb: UnaryCallback): grpc.ClientUnaryCall;
  Count(req: object, options: grpc.CallOptions): grpc.ClientReadableStream<unknown>;
}

function codeName(code: number): string {
  return grpc.status[code] ?? String(code);
}

export class EchoCaller {
  readonly #client: EchoClient;

  /** `address` is host:port (the ingress, or a worker); `authority` the actor's Host. */
  constructor(
    address: string,
    authority: string,
    private readonly deadlineMs: number,
  ) {
    const Ctor = lookup<grpc.ServiceClientConstructor>(loadProto('demo/echo.proto'), ECHO_SERVICE);
    this.#client = new Ctor(address, grpc.credentials.createInsecure(), { 'grpc.default_authority': authority }) as unknown as EchoClient;
  }

  /** One server-streaming `Count` call of `replies` replies; `onReply` sees each one arrive. */
  count(replies: number, onReply?: (index: number) => void): Promise<CallOutcome> {
    return new Promise((resolve) => {
      const startMs = performance.now();
      let received = 0;
      let firstReplyMs: number | null = null;
      const call = this.#client.Count({ count: replies, message: 'bench' }, { deadline: Date.now() + this.deadlineMs });
      let status: grpc.StatusObject | undefined;
      let ended = false;
      // grpc-js emits the status as soon as it arrives, before the stream has handed over the replies it buffered:
      // the call is over once both the status and the stream's end are in.
      const settle = (): void => {
        if (status === undefined || (!ended && status.code === grpc.status.OK)) return;
        const endMs = performance.now();
        if (status.code === grpc.status.OK && received === replies) return resolve({ kind: 'ok', startMs, firstReplyMs, endMs, replies: received });
        const detail = status.code === grpc.status.OK ? `${received} of ${replies} replies` : status.details;
        resolve({ kind: 'failed', startMs, firstReplyMs, endMs, code: status.code === grpc.status.OK ? 'INCOMPLETE' : codeName(status.code), detail });
      };
      call.on('data', () => {
        firstReplyMs ??= performance.now();
        const index = received++;
        onReply?.(index);
      });
      call.on('error', () => undefined); // the status says how it ended
      call.once('end', () => {
        ended = true;
        settle();
      });
      call.once('status', (s: grpc.StatusObject) => {
        status = s;
        settle();
      });
    });
  }

  /** One unary `Echo` call. */
  echo(message: string): Promise<CallOutcome> {
    return new Promise((resolve) => {
      const startMs = performance.now();
      this.#client.Echo({ message }, { deadline: Date.now() + this.deadlineMs }, (err, reply) => {
        const endMs = performance.now();
        const echoed = (reply as { message?: unknown } | undefined)?.message;
        const firstReplyMs = reply === undefined ? null : endMs;
        if (err === null && echoed === message) return resolve({ kind: 'ok', startMs, firstReplyMs, endMs, replies: 1 });
        resolve(
          err === null
            ? { kind: 'failed', startMs, firstReplyMs, endMs, code: 'INCOMPLETE', detail: `echoed ${JSON.stringify(echoed)}` }
            : { kind: 'failed', startMs, firstReplyMs, endMs, code: codeName(err.code), detail: err.details },
        );
      });
    });
  }

  close(): void {
    this.#client.close();
  }
}
