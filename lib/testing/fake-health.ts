/**
 * A dependency's gRPC health service as a `HealthProbe` sees it, on a `ManualClock`: serving, refusing every check
 * at once (a killed process: connection refused), or hung (a stopped process: a check gets no answer until its
 * deadline, as grpc-js ends it with DEADLINE_EXCEEDED). A hung dependency that serves again answers the checks
 * still waiting, as a continued process does. And `probeWorstCase`: how long a probe with a given interval and
 * timeout takes to fail readiness after either fault and to pass again after the dependency is back.
 */
import * as grpc from '@grpc/grpc-js';
import type { HealthClient } from '../grpc-health.js';
import { HealthProbe } from '../health-probe.js';
import { ManualClock } from './manual-clock.js';

export type DependencyMode = 'serving' | 'refusing' | 'hung';

type Callback = (err: grpc.ServiceError | null, response?: { status: string }) => void;

function serviceError(code: grpc.status, details: string): grpc.ServiceError {
  return Object.assign(new Error(`${code} ${grpc.status[code]}: ${details}`), { code, details, metadata: new grpc.Metadata() });
}

export interface FakeDependency {
  readonly client: HealthClient;
  /** Checks received so far. */
  readonly checks: number;
  set(mode: DependencyMode): void;
}

/** `deadlineMs`: when a check nobody answers ends (the probe's `timeoutMs`). */
export function fakeHealthDependency(clock: ManualClock, deadlineMs: number): FakeDependency {
  let mode: DependencyMode = 'serving';
  let checks = 0;
  const waiting = new Set<Callback>();
  const client = {
    Check(_request: unknown, _metadata: unknown, _options: unknown, callback: Callback): { cancel(): void } {
      checks++;
      let done = false;
      const answer: Callback = (err, response) => {
        if (done) return;
        done = true;
        waiting.delete(answer);
        callback(err, response);
      };
      if (mode === 'serving') queueMicrotask(() => answer(null, { status: 'SERVING' }));
      else if (mode === 'refusing') queueMicrotask(() => answer(serviceError(grpc.status.UNAVAILABLE, 'No connection established. Last error: connect ECONNREFUSED')));
      else {
        waiting.add(answer);
        clock.setTimeout(() => answer(serviceError(grpc.status.DEADLINE_EXCEEDED, 'Deadline exceeded')), deadlineMs);
      }
      return { cancel: () => void (done = true) };
    },
    close(): void {},
  };
  return {
    client: client as unknown as HealthClient,
    get checks() {
      return checks;
    },
    set(next) {
      mode = next;
      if (next === 'serving') for (const answer of [...waiting]) queueMicrotask(() => answer(null, { status: 'SERVING' }));
    },
  };
}

export interface ProbeTimes {
  /** From the kill to the probe failing. */
  readonly killed: number;
  /** From the stop (SIGSTOP) to the probe failing. */
  readonly hung: number;
  /** From a killed dependency's restart to the probe passing. */
  readonly backFromKilled: number;
  /** From a hung dependency's continue (SIGCONT) to the probe passing. */
  readonly backFromHung: number;
}

/**
 * The longest each transition takes for a probe of `intervalMs` and `timeoutMs` (threshold: the default), over
 * `samples` instants at which the fault (and, as long after the failure, the return) can come.
 */
export async function probeWorstCase(intervalMs: number, timeoutMs: number, samples = 20): Promise<ProbeTimes> {
  const worst = { killed: 0, hung: 0, backFromKilled: 0, backFromHung: 0 };
  const period = Math.max(intervalMs, timeoutMs);
  for (const [fault, down, back] of [['refusing', 'killed', 'backFromKilled'], ['hung', 'hung', 'backFromHung']] as const) {
    for (let i = 0; i < samples; i++) {
      const offset = Math.floor((period * i) / samples);
      const clock = new ManualClock(1_000_000);
      const dependency = fakeHealthDependency(clock, timeoutMs);
      const probe = new HealthProbe({ name: 'dependency', client: dependency.client, service: '', intervalMs, timeoutMs, clock }).start();
      await clock.advanceUntil(() => probe.state().kind === 'ok', period, 'the first answer');
      await clock.advance(period + offset);
      dependency.set(fault);
      worst[down] = Math.max(worst[down], await clock.advanceUntil(() => probe.state().kind === 'failing', 60_000, `failing after ${fault}`));
      await clock.advance(offset);
      dependency.set('serving');
      worst[back] = Math.max(worst[back], await clock.advanceUntil(() => probe.state().kind === 'ok', 60_000, `ok after ${fault}`));
      probe.stop();
    }
  }
  return worst;
}
