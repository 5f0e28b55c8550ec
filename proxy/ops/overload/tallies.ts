/**
 * What the budgets and the overload manager count: plain numbers bumped where the thing happens (the ingress, the
 * listeners, the ext-proc stage), read by `/stats` (since the last reset) and `/metrics` (lifetime). The levels
 * (`…Open`, `…Waiting`, `…InFlight`) are numbers of things now, reported as they are.
 */
import type { LevelName } from './levels.js';

/** Why a request was answered 503 without being served. */
export interface ShedTallies {
  /** `shed-misses` or above: a request that needed the slow path (503 `PROXY_ERR_OVERLOADED`). */
  overloadMiss: number;
  /** `shed-all`: any new request (503 `PROXY_ERR_OVERLOADED`). */
  overloadAll: number;
  /** A miss that waited its whole `--extproc-queue-timeout-ms` (or re-run budget) for a stream (503 `PROXY_ERR_EXTPROC_QUEUE_TIMEOUT`). */
  extprocQueueTimeout: number;
  /** A miss that found the ext_proc queue full (503 `PROXY_ERR_EXTPROC_QUEUE_FULL`). */
  extprocQueueFull: number;
}

export class OverloadTallies {
  readonly shed: ShedTallies = { overloadMiss: 0, overloadAll: 0, extprocQueueTimeout: 0, extprocQueueFull: 0 };
  /** Client connections closed as they were accepted: past `--max-connections`, or while overloaded. */
  readonly connectionsRefused = { limit: 0, overload: 0 };
  /** Level changes, by the level entered. */
  readonly transitions: Record<LevelName, number> = { normal: 0, 'shed-misses': 0, 'shed-all': 0 };
  /** Misses that had to wait in the ext_proc queue for a stream. */
  extprocQueued = 0;
  /** Client connections open now (every client listener together). */
  connectionsOpen = 0;
  /** Misses waiting now in the ext_proc queue. */
  extprocQueueWaiting = 0;
  /** Misses holding one of the `--extproc-max-streams` slots now. */
  extprocStreamsInFlight = 0;
}
