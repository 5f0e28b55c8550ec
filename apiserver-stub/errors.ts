/**
 * The apiserver-stub error catalog: every failure the control plane, the gRPC services and the admin API report.
 * Each error carries its gRPC status code; the admin API maps the same code to an HTTP status.
 */
import { status as Code } from '@grpc/grpc-js';

export class StubError extends Error {
  override readonly name = 'StubError';
  constructor(
    readonly code: Code,
    message: string,
  ) {
    super(message);
  }
}

export const errors = Object.freeze({
  invalidArgument: (message: string) => new StubError(Code.INVALID_ARGUMENT, message),
  actorNotFound: (key: string) => new StubError(Code.NOT_FOUND, `actor "${key}" not found`),
  noActorCa: () => new StubError(Code.UNIMPLEMENTED, 'the stub has no actor identity CA (start it with --actor-ca-dir)'),
  noEgressPolicy: (key: string) => new StubError(Code.NOT_FOUND, `actor "${key}" has no egress policy`),
  actorExists: (key: string) => new StubError(Code.ALREADY_EXISTS, `actor "${key}" already exists`),
  leaseConflict: () => new StubError(Code.ABORTED, 'another operation is in progress for this actor'),
  noFreeWorkers: () => new StubError(Code.RESOURCE_EXHAUSTED, 'no free workers available'),
  notRunning: (key: string, status: string) => new StubError(Code.FAILED_PRECONDITION, `actor "${key}" is ${status}, not RUNNING`),
  controlUnavailable: () => new StubError(Code.UNAVAILABLE, 'control plane unavailable (outage set through the admin API)'),
  workerLost: (ip: string, why: string) => new StubError(Code.UNAVAILABLE, `worker ${ip} lost: ${why}`),
  workerNotFound: (ip: string) => new StubError(Code.NOT_FOUND, `worker "${ip}" not found`),
  workerNotAttached: (ip: string) => new StubError(Code.FAILED_PRECONDITION, `worker ${ip} is not attached`),
  workerExists: (ip: string) => new StubError(Code.ALREADY_EXISTS, `a live worker is already attached as ${ip}`),
  workerRejected: (ip: string, why: string) => new StubError(Code.INTERNAL, `worker ${ip} rejected the operation: ${why}`),
  protocol: (message: string) => new StubError(Code.INVALID_ARGUMENT, `attach protocol: ${message}`),
});

/** The HTTP status the admin API answers for a StubError code. */
export function httpStatusOf(code: Code): number {
  switch (code) {
    case Code.INVALID_ARGUMENT:
      return 400;
    case Code.NOT_FOUND:
      return 404;
    case Code.ALREADY_EXISTS:
    case Code.ABORTED:
    case Code.FAILED_PRECONDITION:
      return 409;
    case Code.RESOURCE_EXHAUSTED:
    case Code.UNAVAILABLE:
      return 503;
    case Code.UNIMPLEMENTED:
      return 501;
    default:
      return 500;
  }
}

/** Any thrown value as a StubError (unexpected ones become INTERNAL). */
export function asStubError(err: unknown): StubError {
  if (err instanceof StubError) return err;
  return new StubError(Code.INTERNAL, err instanceof Error ? err.message : String(err));
}
