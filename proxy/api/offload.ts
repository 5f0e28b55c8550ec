/**
 * Offloaded filter work: the part of a filter that burns CPU (parsing a JSON body, verifying a signature, running a
 * policy or regex engine over a body) can run on a worker thread instead of the event loop every request shares.
 *
 * A filter module exports, besides its default factory, a named `offload` function (`OffloadFunction`): pure, it
 * receives a structured-cloneable input and returns an `OffloadDecision`. The factory's filter (the main-loop part)
 * prepares that input — the headers it needs, the body from `ctx.readBody` as a copy passed by transfer — calls
 * `FilterContext.offload`, and applies the decision with `applyDecision`. With `--filter-workers 0` (the default)
 * the same function runs inline, directly; with a pool whose queue (`--filter-backlog`) is full it runs inline too.
 */
import { CONTINUE, reply, type FilterResult, type OffloadDecision, type RequestContext } from './filter.js';

export type { OffloadDecision, OffloadFunction, OffloadOptions, OffloadReply, Offloader } from './filter.js';

/** A copy of `bytes` in an `ArrayBuffer` of its own, safe to transfer (`transfer: [copy.buffer]`). */
export function transferableCopy(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  return new Uint8Array(bytes);
}

/** Why `decision` is not an `OffloadDecision`, or undefined when it is one. */
export function decisionProblem(decision: unknown): string | undefined {
  if (decision === null || typeof decision !== 'object') return 'the offloaded function did not return a decision object';
  const d = decision as { kind?: unknown; setHeaders?: unknown; removeHeaders?: unknown; reply?: unknown };
  if (d.kind === 'continue') {
    if (d.setHeaders !== undefined && (d.setHeaders === null || typeof d.setHeaders !== 'object' || Object.values(d.setHeaders).some((v) => typeof v !== 'string'))) {
      return 'setHeaders must map header names to strings';
    }
    if (d.removeHeaders !== undefined && (!Array.isArray(d.removeHeaders) || d.removeHeaders.some((v) => typeof v !== 'string'))) {
      return 'removeHeaders must be a list of header names';
    }
    return undefined;
  }
  if (d.kind !== 'reply') return `the decision's kind is ${JSON.stringify(d.kind) ?? 'undefined'}, not "continue" or "reply"`;
  const r = d.reply as { status?: unknown } | null | undefined;
  if (r === null || typeof r !== 'object' || typeof r.status !== 'number') return 'a reply decision needs a numeric status';
  return undefined;
}

/**
 * Applies an offloaded decision to the request: removes then sets headers through `ctx.headers` (which keeps its
 * checks: `host` and invalid names or values throw a `TypeError`) and continues, or answers with the reply.
 * A value that is not a decision throws a `TypeError` (the filter fails: 500).
 */
export function applyDecision(ctx: RequestContext, decision: OffloadDecision): FilterResult {
  const problem = decisionProblem(decision);
  if (problem !== undefined) throw new TypeError(problem);
  if (decision.kind === 'reply') return reply(decision.reply);
  for (const name of decision.removeHeaders ?? []) ctx.headers.delete(name);
  for (const [name, value] of Object.entries(decision.setHeaders ?? {})) ctx.headers.set(name, value);
  return CONTINUE;
}
