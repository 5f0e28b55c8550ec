/** What every scenario provides to the runner, and what the runner gives it. */
import type { ActorPlacement } from '../admin.js';
import type { BenchConfig } from '../config.js';
import type { ArmSpec } from '../arms.js';
import type { ArmRuntime, Stack } from '../stack.js';
import type { ArmName, ArmResult, ScenarioName } from '../types.js';

export interface ScenarioContext {
  readonly config: BenchConfig;
  /** The stub and its workers (absent with --target: someone else runs them). */
  readonly stack?: Stack;
  /** The actors the load spreads over, in name order. */
  readonly actors: readonly string[];
  /** Current placements (re-read by the runner before every arm). */
  placements: readonly ActorPlacement[];
  log(message: string): void;
}

export interface Scenario {
  readonly name: ScenarioName;
  /** Arms run when --arms is not given. */
  readonly defaultArms: readonly ArmName[];
  /** Arms that make sense for this scenario (others are skipped with a note). */
  readonly supportedArms: readonly ArmName[];
  /** One-time preparation after the stub is up (e.g. wake every actor). */
  prepare(ctx: ScenarioContext): Promise<void>;
  /**
   * Starts an arm's processes itself (a scenario that breaks them needs its own per arm); without it the runner
   * starts one shared stub for the run and each arm's front processes on it.
   */
  readonly startArm?: (ctx: ScenarioContext, spec: ArmSpec) => Promise<ArmRuntime>;
  /** How one arm's load is sized, for the log (default: the warm-up and measured seconds). */
  readonly window?: (config: BenchConfig) => string;
  /** Measures one arm whose processes are running. */
  runArm(ctx: ScenarioContext, runtime: ArmRuntime): Promise<ArmResult>;
}
