/**
 * A filter module with an offloaded part, for the pool's tests: the main-loop part sends the request's `x-op`
 * header, its `x-ms` header and its body (a transferred copy) to `offload`, which acts by the op:
 *   where   continue, setting `x-where: main|worker` (which thread ran it) and removing `x-remove-me`
 *   reply   a 418 local reply whose body is the request body
 *   throw   throws
 *   exit    ends its worker thread (on the main thread: throws instead)
 *   sleep   sleeps `x-ms` milliseconds without using CPU (a blocked worker; on the main thread: continues at once)
 *   block   waits until `release()`'s flag in the input's shared memory is set (unit tests only; main thread: continues)
 *   bad     returns something that is not a decision
 * Any other op continues with `x-echo: <op>:<body length>`.
 */
import { isMainThread } from 'node:worker_threads';
import { applyDecision, transferableCopy, type FilterFactory, type OffloadDecision, type OffloadFunction } from '../../../api/public.js';

export interface FixtureInput {
  readonly op: string;
  readonly ms?: number;
  readonly body?: Uint8Array;
  /** `block`: an Int32Array over shared memory; the worker waits while its first slot is 0. */
  readonly gate?: Int32Array;
}

const where = (): string => (isMainThread ? 'main' : 'worker');

export const offload: OffloadFunction<FixtureInput> = (input): OffloadDecision => {
  const length = input.body?.byteLength ?? 0;
  switch (input.op) {
    case 'where':
      return { kind: 'continue', setHeaders: { 'x-where': where() }, removeHeaders: ['x-remove-me'] };
    case 'reply':
      return { kind: 'reply', reply: { status: 418, headers: { 'content-type': 'text/plain' }, body: input.body ?? '', details: 'fixture: reply' } };
    case 'throw':
      throw new Error(`fixture threw on ${where()}`);
    case 'exit':
      if (isMainThread) throw new Error('fixture: exit on the main thread');
      process.exit(3);
    // eslint-disable-next-line no-fallthrough
    case 'sleep':
      if (!isMainThread) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, input.ms ?? 0);
      return { kind: 'continue', setHeaders: { 'x-where': where() } };
    case 'block':
      if (!isMainThread && input.gate !== undefined) while (Atomics.load(input.gate, 0) === 0) Atomics.wait(input.gate, 0, 0, 1000);
      return { kind: 'continue', setHeaders: { 'x-where': where() } };
    case 'bad':
      return { kind: 'maybe' } as unknown as OffloadDecision;
    default:
      return { kind: 'continue', setHeaders: { 'x-echo': `${input.op}:${length}` } };
  }
};

const factory: FilterFactory = ({ offload: run }) => ({
  name: 'offload-fixture',
  async onRequest(ctx) {
    const op = ctx.headers.get('x-op');
    if (op === undefined || run === undefined) return { kind: 'continue' };
    const ms = Number(ctx.headers.get('x-ms') ?? 0);
    const body = transferableCopy(await ctx.readBody({ limit: 65536 }));
    return applyDecision(ctx, await run<FixtureInput>(ctx, { op, ms, body }, { transfer: [body.buffer] }));
  },
});
export default factory;
