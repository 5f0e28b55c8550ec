/**
 * The overload state machine, as one pure function (tested as a table): what the resource monitors read decides
 * the level, as Envoy's overload manager triggers its actions on thresholds per monitor.
 *
 * Levels: 0 `normal`; 1 `shed-misses` (requests that need the slow path — an ext_proc stream, a resume — and new
 * connections are refused, hits keep flowing); 2 `shed-all` (every new request is refused too). Each monitor has
 * one threshold per level (0: that trigger is off); a reading at or above one asks for its level, and the highest
 * level asked for by any monitor is the one demanded.
 *
 * Hysteresis, so the state does not flap on a noisy reading:
 * - up: the demand must be above the current level for `riseSamples` samples in a row (one long garbage
 *   collection or a blocking start-up step is one sample, not an overload), then the level jumps to the demand;
 * - down: the readings must stay below `recoverRatio` × the current level's thresholds for `fallSamples` samples
 *   in a row, and the level then drops one step (shed-all → shed-misses → normal: hits come back before misses).
 */

export type OverloadLevel = 0 | 1 | 2;

/** The levels' names, as `/stats`, the logs and `/ready` say them. */
export const LEVEL_NAMES = Object.freeze(['normal', 'shed-misses', 'shed-all'] as const);
export type LevelName = (typeof LEVEL_NAMES)[number];

/** What the monitors read: the event loop's delay (ms) and the V8 heap in use (bytes). */
export interface Readings {
  readonly loopDelayMs: number;
  readonly heapUsedBytes: number;
}

export type MonitorName = keyof Readings;
export const MONITORS: readonly MonitorName[] = Object.freeze(['loopDelayMs', 'heapUsedBytes']);

/** One monitor's thresholds: the reading at which misses are shed, and the one at which everything is (0: off). */
export interface Trigger {
  readonly shedMisses: number;
  readonly shedAll: number;
}

export type Triggers = Readonly<Record<MonitorName, Trigger>>;

export interface Hysteresis {
  readonly riseSamples: number;
  readonly fallSamples: number;
  readonly recoverRatio: number;
}

/** Two samples (0.5 s at the 250 ms interval) to go up, four (1 s) per step down, below 90 % of the thresholds. */
export const DEFAULT_HYSTERESIS: Hysteresis = Object.freeze({ riseSamples: 2, fallSamples: 4, recoverRatio: 0.9 });

/** Which monitor set the level, with its reading and the threshold it met. */
export interface Cause {
  readonly monitor: MonitorName;
  readonly reading: number;
  readonly threshold: number;
}

export interface OverloadState {
  readonly level: OverloadLevel;
  /** Samples in a row whose demand was above the level. */
  readonly rising: number;
  /** Samples in a row whose readings were below the level's recovery band. */
  readonly calm: number;
  /** What put the state at its level (undefined at `normal`). */
  readonly cause: Cause | undefined;
}

export const NORMAL: OverloadState = Object.freeze({ level: 0, rising: 0, calm: 0, cause: undefined });

/** Any trigger on at all (otherwise nothing needs sampling). */
export function anyTrigger(triggers: Triggers): boolean {
  return MONITORS.some((m) => triggers[m].shedMisses > 0 || triggers[m].shedAll > 0);
}

/** The level `reading` reaches against `trigger` with the thresholds scaled by `ratio`, and the threshold met. */
function reached(reading: number, trigger: Trigger, ratio: number): { level: OverloadLevel; threshold: number } {
  if (trigger.shedAll > 0 && reading >= trigger.shedAll * ratio) return { level: 2, threshold: trigger.shedAll };
  if (trigger.shedMisses > 0 && reading >= trigger.shedMisses * ratio) return { level: 1, threshold: trigger.shedMisses };
  return { level: 0, threshold: 0 };
}

/** The highest level the readings reach (thresholds × `ratio`), and the monitor that reaches it first. */
export function levelOf(readings: Readings, triggers: Triggers, ratio = 1): { level: OverloadLevel; cause: Cause | undefined } {
  let level: OverloadLevel = 0;
  let cause: Cause | undefined;
  for (const monitor of MONITORS) {
    const r = reached(readings[monitor], triggers[monitor], ratio);
    if (r.level > level) {
      level = r.level;
      cause = { monitor, reading: readings[monitor], threshold: r.threshold };
    }
  }
  return { level, cause };
}

/** The state after one more sample. */
export function nextState(state: OverloadState, readings: Readings, triggers: Triggers, h: Hysteresis = DEFAULT_HYSTERESIS): OverloadState {
  const demand = levelOf(readings, triggers);
  if (demand.level > state.level) {
    const rising = state.rising + 1;
    if (rising >= h.riseSamples) return { level: demand.level, rising: 0, calm: 0, cause: demand.cause };
    return { ...state, rising, calm: 0 };
  }
  const held = levelOf(readings, triggers, h.recoverRatio);
  if (held.level >= state.level) return state.rising === 0 && state.calm === 0 ? state : { ...state, rising: 0, calm: 0 };
  const calm = state.calm + 1;
  if (calm < h.fallSamples) return { ...state, rising: 0, calm };
  const level = (state.level - 1) as OverloadLevel;
  return { level, rising: 0, calm: 0, cause: level === 0 ? undefined : (held.cause ?? state.cause) };
}
