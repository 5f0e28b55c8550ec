/**
 * The resource monitors' readings for this process: the event loop's delay (`perf_hooks.monitorEventLoopDelay`,
 * the mean over the last sampling interval less the histogram's own resolution, as `@fastify/under-pressure` reads
 * it) and the V8 heap in use (`process.memoryUsage().heapUsed`). A monitor whose triggers are both off is not read
 * (the loop-delay histogram is not even enabled). RSS is not a monitor: memory a process freed is not always given
 * back to the system, so an RSS threshold would keep a process that recovered shedding; the bytes outside the heap
 * that grow with load are bounded by the budgets instead (`--replay-buffer-budget-bytes`, `--max-connections`).
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import type { Readings, Triggers } from './levels.js';

/** Reads the monitors once; called every sampling interval. */
export type Sampler = () => Readings;

export interface ProcessSampler {
  readonly sample: Sampler;
  close(): void;
}

/** The loop-delay histogram's resolution (ms). */
const RESOLUTION_MS = 10;

export function processSampler(triggers: Triggers): ProcessSampler {
  const on = (t: { shedMisses: number; shedAll: number }): boolean => t.shedMisses > 0 || t.shedAll > 0;
  let histogram: IntervalHistogram | undefined;
  if (on(triggers.loopDelayMs)) {
    histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    histogram.enable();
  }
  const heap = on(triggers.heapUsedBytes);
  return {
    sample(): Readings {
      let loopDelayMs = 0;
      if (histogram !== undefined) {
        const mean = histogram.mean; // NaN before the histogram's first sample
        if (mean > 0) loopDelayMs = Math.max(0, mean / 1e6 - RESOLUTION_MS);
        histogram.reset();
      }
      return { loopDelayMs, heapUsedBytes: heap ? process.memoryUsage().heapUsed : 0 };
    },
    close() {
      histogram?.disable();
    },
  };
}
