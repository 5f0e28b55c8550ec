/**
 * The gRPC health checking protocol (`grpc.health.v1.Health`, proto/grpc/health/v1/health.proto), both sides:
 * - a server answers `Check` from a status function (`healthImplementation`): a known service name gets its
 *   status, an unknown one `NOT_FOUND`, as the specification says; `Watch` sends the status at once and again
 *   whenever it changes, until the caller ends the call or the server closes the watches;
 * - a client's `Check` is classified as a `HealthAnswer` (`checkHealth`), so a caller can tell "answers and is
 *   serving" from "answers but has no health service" (UNIMPLEMENTED: reachable, nothing more is known), "does not
 *   answer in time" and "cannot be reached".
 */
import * as grpc from '@grpc/grpc-js';
import { loadProto, lookup } from './proto.js';
import { grpcCodeName } from './wire-contract.js';

export const HEALTH_PROTO = 'grpc/health/v1/health.proto';
export const HEALTH_SERVICE = 'grpc.health.v1.Health';
/** The service name that stands for the whole server. */
export const WHOLE_SERVER = '';

export type ServingStatus = 'SERVING' | 'NOT_SERVING';

/** What a server says about one service name; undefined: the name is not one it knows. */
export type HealthStatusOf = (service: string) => ServingStatus | undefined;

interface CheckRequest {
  readonly service: string;
}
interface CheckResponse {
  readonly status: string;
}

export type HealthClient = grpc.Client & {
  Check(request: CheckRequest, metadata: grpc.Metadata, options: Partial<grpc.CallOptions>, callback: (err: grpc.ServiceError | null, response?: CheckResponse) => void): grpc.ClientUnaryCall;
};

function healthConstructor(): grpc.ServiceClientConstructor {
  return lookup<grpc.ServiceClientConstructor>(loadProto(HEALTH_PROTO), HEALTH_SERVICE);
}

export function healthServiceDefinition(): grpc.ServiceDefinition {
  return healthConstructor().service;
}

/** How often an open Watch looks at the status again (the status function has no change events). */
const WATCH_POLL_MS = 1000;

/** The Health service's handlers, answering from `statusOf`; `close()` ends every open Watch (at shutdown). */
export class HealthServer {
  readonly #statusOf: HealthStatusOf;
  readonly #watches = new Set<grpc.ServerWritableStream<CheckRequest, CheckResponse>>();

  constructor(statusOf: HealthStatusOf) {
    this.#statusOf = statusOf;
  }

  /** Adds the Health service to `server`. */
  addTo(server: grpc.Server): void {
    server.addService(healthServiceDefinition(), {
      Check: (call: grpc.ServerUnaryCall<CheckRequest, CheckResponse>, callback: grpc.sendUnaryData<CheckResponse>) => {
        const status = this.#statusOf(call.request.service);
        if (status === undefined) callback({ code: grpc.status.NOT_FOUND, details: `unknown service "${call.request.service}"` });
        else callback(null, { status });
      },
      Watch: (call: grpc.ServerWritableStream<CheckRequest, CheckResponse>) => this.#watch(call),
    });
  }

  #watch(call: grpc.ServerWritableStream<CheckRequest, CheckResponse>): void {
    this.#watches.add(call);
    let last = '';
    const send = (): void => {
      const status = this.#statusOf(call.request.service) ?? 'SERVICE_UNKNOWN';
      if (status !== last) call.write({ status });
      last = status;
    };
    send();
    const timer = setInterval(send, WATCH_POLL_MS);
    timer.unref();
    const stop = (): void => {
      clearInterval(timer);
      this.#watches.delete(call);
    };
    call.on('cancelled', stop);
    call.on('close', stop);
  }

  /** Ends every open Watch (a server waiting for its calls to finish would otherwise wait for them). */
  close(): void {
    for (const call of this.#watches) call.end();
    this.#watches.clear();
  }
}

/**
 * A Health client on `address`. `channelOptions` should be those of the channel whose peer is being watched:
 * grpc-js pools subchannels by address, options and credentials, so identical ones check the very connection
 * that channel uses. `channel`: check over this existing channel instead.
 */
export function createHealthClient(
  address: string,
  opts: { readonly channelOptions?: grpc.ChannelOptions; readonly credentials?: grpc.ChannelCredentials; readonly channel?: ReturnType<grpc.Client['getChannel']> } = {},
): HealthClient {
  const Ctor = healthConstructor();
  // grpc-js types `channelOverride` as its own channel class; any client's getChannel() returns one.
  const override = opts.channel as unknown as grpc.ClientOptions['channelOverride'];
  const options: grpc.ClientOptions = { ...opts.channelOptions, ...(override === undefined ? {} : { channelOverride: override }) };
  return new Ctor(address, opts.credentials ?? grpc.credentials.createInsecure(), options) as unknown as HealthClient;
}

/** One health check's answer. */
export type HealthAnswer =
  | { readonly kind: 'serving' }
  | { readonly kind: 'not-serving'; readonly status: string }
  /** The peer answered UNIMPLEMENTED: it is reachable and answering, but serves no health checks. */
  | { readonly kind: 'no-health-service' }
  /** The peer's health service does not know the name asked for: reachable and answering. */
  | { readonly kind: 'unknown-service' }
  | { readonly kind: 'no-answer'; readonly timeoutMs: number }
  | { readonly kind: 'failed'; readonly code: string; readonly details: string };

const NO_METADATA = new grpc.Metadata();

/** One `Check` of `service`, with a deadline of `timeoutMs`. Never rejects; `cancel` abandons it. */
export function checkHealth(client: HealthClient, service: string, timeoutMs: number): { readonly answer: Promise<HealthAnswer>; cancel(): void } {
  let call: grpc.ClientUnaryCall | undefined;
  const answer = new Promise<HealthAnswer>((resolve) => {
    try {
      call = client.Check({ service }, NO_METADATA, { deadline: Date.now() + timeoutMs }, (err, response) => {
        if (err === null) {
          const status = response?.status ?? 'UNKNOWN';
          resolve(status === 'SERVING' ? { kind: 'serving' } : { kind: 'not-serving', status });
        } else if (err.code === grpc.status.UNIMPLEMENTED) resolve({ kind: 'no-health-service' });
        else if (err.code === grpc.status.NOT_FOUND) resolve({ kind: 'unknown-service' });
        else if (err.code === grpc.status.DEADLINE_EXCEEDED) resolve({ kind: 'no-answer', timeoutMs });
        else resolve({ kind: 'failed', code: grpcCodeName(err.code), details: err.details ?? err.message });
      });
    } catch (err) {
      // A client whose channel is closed throws at once (a probe's check racing its component's stop).
      resolve({ kind: 'failed', code: 'CANCELLED', details: err instanceof Error ? err.message : String(err) });
    }
  });
  return { answer, cancel: () => call?.cancel() };
}

/** Whether an answer shows a peer that can do its work, and if not, why (a sentence fragment). */
export function judgeAnswer(answer: HealthAnswer): { readonly ok: true } | { readonly ok: false; readonly why: string } {
  switch (answer.kind) {
    case 'serving':
    case 'no-health-service':
    case 'unknown-service':
      return { ok: true };
    case 'not-serving':
      return { ok: false, why: `reports ${answer.status}` };
    case 'no-answer':
      return { ok: false, why: `no answer to a health check within ${answer.timeoutMs} ms` };
    case 'failed':
      return { ok: false, why: answer.code === 'UNAVAILABLE' ? `unreachable (${answer.details})` : `health check failed: ${answer.code} ${answer.details}` };
  }
}
