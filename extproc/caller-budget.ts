/**
 * The data plane's own budget for a request (`actor-edge-resume-budget-ms`, the stream's initial metadata): the
 * milliseconds left of its re-run budget when it opened the stream. extproc's flights retry a resume for that
 * caller only while a retry can start within it (`lib/resume/flight.ts`). A value that is not a whole number of
 * milliseconds up to an hour is ignored (the flight's own budget applies), and so is its absence (Envoy sends none).
 */
import type * as grpc from '@grpc/grpc-js';
import { RESUME_BUDGET_METADATA } from '../lib/wire-contract.js';

const MAX_BUDGET_MS = 3_600_000;

/** The budget the stream's metadata carries, in ms, or undefined. */
export function callerBudgetMs(metadata: grpc.Metadata | undefined): number | undefined {
  const values = metadata?.get(RESUME_BUDGET_METADATA) ?? [];
  if (values.length !== 1) return undefined;
  const text = String(values[0]);
  if (!/^\d{1,7}$/.test(text)) return undefined;
  const ms = Number(text);
  return ms <= MAX_BUDGET_MS ? ms : undefined;
}
