/**
 * The heavy-filter scenario's filter: a stand-in for a filter that parses a JSON body and then spends real CPU on it
 * (a policy engine, a signature check, counting tokens). POSTs with a JSON Content-Type have their body read and
 * handed to the offloaded part, which parses it and then runs `rounds` chained SHA-256 rounds over it (`heavyWork`),
 * and the request goes on with the digest's first 16 hex digits in `x-heavy-digest`; a body that is not a JSON
 * object gets 400. Every other request (the scenario's GETs, its cache hits) is let through without reading anything.
 *
 * The work is a fixed number of rounds, not a clock loop: every call does the same work whichever thread runs it and
 * however busy the machine is, and a slower machine shows as a longer call, not as less work. The bench sizes the
 * rounds once at the run's start (`calibrateRounds`: about 2 ms on the machine) and gives every proxy the same
 * number through `BENCH_HEAVY_ROUNDS`, read by the factory on the event loop and passed in each call's input (the
 * module is imported afresh in each worker thread, where the factory never runs).
 */
import { createHash } from 'node:crypto';
import { applyDecision, CONTINUE, transferableCopy, type FilterFactory, type OffloadDecision, type OffloadFunction } from '../../proxy/api/public.js';

export const ROUNDS_ENV = 'BENCH_HEAVY_ROUNDS';
/** Rounds when `BENCH_HEAVY_ROUNDS` is not set. */
export const DEFAULT_ROUNDS = 1000;
/** The largest body the filter reads (larger: 413 from the proxy). */
export const MAX_BODY_BYTES = 64 * 1024;
export const DIGEST_HEADER = 'x-heavy-digest';

export interface HeavyInput {
  readonly body: Uint8Array;
  readonly rounds: number;
}

/** `rounds` chained SHA-256 rounds over `body` (each hashes the previous digest and the body); the last digest, hex. */
export function heavyWork(body: Uint8Array, rounds: number): string {
  let digest = createHash('sha256').update(body).digest();
  for (let i = 0; i < rounds; i++) digest = createHash('sha256').update(digest).update(body).digest();
  return digest.toString('hex');
}

/** Wall time of the fastest of `samples` runs of `fn`, ms: on a shared machine, the run no other process interrupted. */
export function fastestMsOf(fn: () => void, samples: number): number {
  let best = Infinity;
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    fn();
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

/**
 * The rounds that take about `targetMs` of one core here: `probe` rounds timed by the fastest of `samples` runs (the
 * process's CPU clock ticks too coarsely for a run this short), scaled.
 */
export function calibrateRounds(body: Uint8Array, targetMs: number, probe = 200, samples = 15): { rounds: number; msPerRound: number } {
  heavyWork(body, probe); // compiled and warm before timing
  const msPerRound = fastestMsOf(() => heavyWork(body, probe), samples) / probe;
  return { rounds: Math.max(1, Math.round(targetMs / msPerRound)), msPerRound };
}
function badRequest(detail: string): OffloadDecision {
  return { kind: 'reply', reply: { status: 400, headers: { 'content-type': 'text/plain' }, body: `${detail}\n`, details: `heavy-json: ${detail}` } };
}

/** The offloaded half: parse, burn the rounds, name the digest. */
export const offload: OffloadFunction<HeavyInput> = ({ body, rounds }) => {
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch {
    return badRequest('the body is not JSON');
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return badRequest('the body is not a JSON object');
  return { kind: 'continue', setHeaders: { [DIGEST_HEADER]: heavyWork(body, rounds).slice(0, 16) } };
};

/** `BENCH_HEAVY_ROUNDS` as a whole number of rounds (0 allowed), else the default. */
export function roundsFrom(env: NodeJS.ProcessEnv): number {
  const raw = env[ROUNDS_ENV];
  if (raw === undefined || raw === '') return DEFAULT_ROUNDS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`heavy-json: ${ROUNDS_ENV} must be a whole number, not ${JSON.stringify(raw)}`);
  return n;
}

const JSON_TYPE = /^application\/json\s*(?:;|$)/i;

/** The main-loop half. */
const factory: FilterFactory = ({ offload: run }) => {
  const rounds = roundsFrom(process.env);
  if (run === undefined) throw new Error('heavy-json: loaded without its offload export');
  return {
    name: 'heavy-json',
    async onRequest(ctx) {
      if (ctx.method !== 'POST' || !JSON_TYPE.test(ctx.headers.get('content-type') ?? '')) return CONTINUE;
      const body = transferableCopy(await ctx.readBody({ limit: MAX_BODY_BYTES }));
      return applyDecision(ctx, await run<HeavyInput>(ctx, { body, rounds }, { transfer: [body.buffer] }));
    },
  };
};
export default factory;
