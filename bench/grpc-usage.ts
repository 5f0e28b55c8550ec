/**
 * The grpc scenario's arithmetic, pure: a round of concurrent calls from its outcomes, and the figures the report
 * shows (one call alone, a round's wall time, the overlap ratio, the unary call beside an open stream).
 *
 * The overlap ratio is the rounds' summed streaming times (each call's first reply to its status) over their summed
 * wall times: the mean number of calls streaming at once. K calls that run together each stream for about the
 * round's wall time (ratio about K); calls served one at a time stream one after another (about 1). The client's
 * durations would not tell the two apart as well: a call held back behind others has its wait in its duration, so
 * their sum over the wall time is (K + 1) ÷ 2 when the calls are served one at a time (`durationOverlap`, reported
 * too).
 */
import { durationOf, streamingOf, type CallOutcome } from './grpc-calls.js';
import { summarize } from './latency.js';
import type { GrpcRound, GrpcUsage, UnarySample } from './types.js';

/** One round: every call's duration, how many failed, and the time from the first start to the last status. */
export function roundOf(outcomes: readonly CallOutcome[]): GrpcRound {
  const callMs = outcomes.map(durationOf);
  const streamMs = outcomes.map(streamingOf);
  const wallMs = outcomes.length ? Math.max(...outcomes.map((o) => o.endMs)) - Math.min(...outcomes.map((o) => o.startMs)) : 0;
  return {
    callMs,
    streamMs,
    errors: outcomes.filter((o) => o.kind !== 'ok').length,
    wallMs,
    callMsSum: sum(callMs),
    streamMsSum: sum(streamMs),
  };
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}

/** Σ of `part` ÷ Σ wall times over the rounds (0 when no round took any time). */
function perWall(rounds: readonly GrpcRound[], part: (r: GrpcRound) => number): number {
  const wall = sum(rounds.map((r) => r.wallMs));
  return wall > 0 ? sum(rounds.map(part)) / wall : 0;
}

/** The overlap ratio: Σ streaming times ÷ Σ wall times over the rounds. */
export function overlapOf(rounds: readonly GrpcRound[]): number {
  return perWall(rounds, (r) => r.streamMsSum);
}

/** Σ client durations ÷ Σ wall times over the rounds. */
export function durationOverlapOf(rounds: readonly GrpcRound[]): number {
  return perWall(rounds, (r) => r.callMsSum);
}

/** The unary call answered beside a stream: its latency, whether it succeeded, and whether the stream was still open. */
export function unarySample(unary: CallOutcome, streamOpen: boolean): UnarySample {
  return { latencyMs: durationOf(unary), ok: unary.kind === 'ok', streamOpen };
}

/** What one arm measured, with the settings it ran under. */
export interface GrpcMeasurements extends Pick<GrpcUsage, 'worker' | 'streamActor' | 'unaryActor' | 'concurrency' | 'repliesPerCall' | 'replyIntervalMs' | 'longStreamReplies' | 'rounds'> {
  readonly alone: readonly CallOutcome[];
  readonly unaryAlone: readonly CallOutcome[];
  readonly unaryWhileStreaming: readonly UnarySample[];
}

export function grpcUsage(m: GrpcMeasurements): GrpcUsage {
  const aloneMs = m.alone.map(durationOf);
  const aloneP50Ms = summarize(aloneMs).p50Ms;
  const wallP50Ms = summarize(m.rounds.map((r) => r.wallMs)).p50Ms;
  const beside = summarize(m.unaryWhileStreaming.map((s) => s.latencyMs));
  return {
    worker: m.worker,
    streamActor: m.streamActor,
    unaryActor: m.unaryActor,
    concurrency: m.concurrency,
    repliesPerCall: m.repliesPerCall,
    replyIntervalMs: m.replyIntervalMs,
    aloneMs,
    aloneP50Ms,
    rounds: m.rounds,
    wallP50Ms,
    wallPerCall: aloneP50Ms > 0 ? wallP50Ms / aloneP50Ms : 0,
    overlap: overlapOf(m.rounds),
    durationOverlap: durationOverlapOf(m.rounds),
    longStreamReplies: m.longStreamReplies,
    unaryAloneP50Ms: summarize(m.unaryAlone.map(durationOf)).p50Ms,
    unaryWhileStreaming: m.unaryWhileStreaming,
    unaryWhileStreamingP50Ms: beside.p50Ms,
    unaryWhileStreamingMaxMs: beside.maxMs,
  };
}
