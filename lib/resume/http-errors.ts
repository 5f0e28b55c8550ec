/**
 * The one catalog that turns a failed resume into an HTTP answer, exactly as the upstream router does. Bodies are
 * text/plain. Control-plane descriptions are passed through only where the router does (FAILED_PRECONDITION,
 * ABORTED, RESOURCE_EXHAUSTED); unknown errors never leak details. `outcome` is a fixed, low-cardinality label
 * for metrics and logs.
 */
import * as grpc from '@grpc/grpc-js';
import type { ResumeFailure } from './outcome.js';

export type FailureLabel =
  | 'invalid_host'
  | 'parking_full'
  | 'cancelled'
  | 'timeout'
  | 'not_found'
  | 'failed_precondition'
  | 'lock_conflict'
  | 'unavailable'
  | 'permission_denied'
  | 'unauthenticated'
  | 'no_capacity'
  | 'routing_failed'
  | 'resume_error';

/** Every outcome label a resolver reports: `ok` plus the failures. */
export type OutcomeLabel = 'ok' | FailureLabel;

export const OUTCOME_LABELS: readonly OutcomeLabel[] = Object.freeze([
  'ok',
  'invalid_host',
  'parking_full',
  'cancelled',
  'timeout',
  'not_found',
  'failed_precondition',
  'lock_conflict',
  'unavailable',
  'permission_denied',
  'unauthenticated',
  'no_capacity',
  'routing_failed',
  'resume_error',
]);

export interface HttpError {
  readonly status: number;
  readonly body: string;
  readonly outcome: FailureLabel;
}

/** `key` is the actor reference `atespace/name`. */
export function httpErrorFor(failure: ResumeFailure, key: string): HttpError {
  switch (failure.kind) {
    case 'lot-full':
      return { status: 503, body: `actor "${key}" unavailable: router at capacity`, outcome: 'parking_full' };
    case 'cancelled':
      return { status: 408, body: `request for actor ${key} cancelled by client`, outcome: 'cancelled' };
    case 'timeout':
      return { status: 504, body: `actor ${key} request timed out`, outcome: 'timeout' };
    case 'unroutable':
      return { status: 500, body: `actor ${key} routing failed`, outcome: 'routing_failed' };
    case 'grpc-error':
      return grpcError(failure.code, failure.details, key);
  }
}

function grpcError(code: grpc.status, details: string, key: string): HttpError {
  switch (code) {
    case grpc.status.NOT_FOUND:
      return { status: 404, body: `actor ${key} not found`, outcome: 'not_found' };
    case grpc.status.FAILED_PRECONDITION:
      return { status: 503, body: `actor ${key} unavailable: ${details}`, outcome: 'failed_precondition' };
    case grpc.status.ABORTED:
      return { status: 503, body: `actor ${key} unavailable: ${details}`, outcome: 'lock_conflict' };
    case grpc.status.UNAVAILABLE:
      return { status: 503, body: `actor ${key} unavailable`, outcome: 'unavailable' };
    case grpc.status.DEADLINE_EXCEEDED:
      return { status: 504, body: `actor ${key} request timed out`, outcome: 'timeout' };
    case grpc.status.PERMISSION_DENIED:
      return { status: 403, body: `actor ${key} access denied`, outcome: 'permission_denied' };
    case grpc.status.UNAUTHENTICATED:
      return { status: 401, body: `actor ${key} authentication required`, outcome: 'unauthenticated' };
    case grpc.status.RESOURCE_EXHAUSTED:
      return { status: 503, body: `actor ${key} unavailable: ${details}`, outcome: 'no_capacity' };
    default:
      return { status: 500, body: `error resuming actor ${key}`, outcome: 'resume_error' };
  }
}

/** The answer for a Host that does not name an actor. `host` is quoted (and escaped) as received. */
export function invalidHostError(host: string): HttpError {
  return { status: 404, body: `invalid host ${JSON.stringify(host)}`, outcome: 'invalid_host' };
}
