/**
 * Background churn: suspends and moves random RUNNING actors at configured rates, so bindings go stale while
 * traffic flows (POST /churn {suspendPerSec, movePerSec}; DELETE /churn stops it).
 */
import type { Logger } from '../lib/logger.js';
import type { ControlPlane } from './control-plane.js';
import { errors } from './errors.js';
import type { ActorRecord } from './store.js';

export interface ChurnRates {
  readonly suspendPerSec: number;
  readonly movePerSec: number;
}

const TICK_MS = 50;
const MAX_RATE = 10_000;

export function parseChurnRates(body: unknown): ChurnRates {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw errors.invalidArgument('expected a JSON object {suspendPerSec, movePerSec}');
  const b = body as Record<string, unknown>;
  for (const name of Object.keys(b)) {
    if (name !== 'suspendPerSec' && name !== 'movePerSec') throw errors.invalidArgument(`unknown field "${name}" (known: suspendPerSec, movePerSec)`);
  }
  const rate = (name: 'suspendPerSec' | 'movePerSec'): number => {
    const v = b[name] ?? 0;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > MAX_RATE) throw errors.invalidArgument(`${name}: expected a number from 0 to ${MAX_RATE}`);
    return v;
  };
  const rates = { suspendPerSec: rate('suspendPerSec'), movePerSec: rate('movePerSec') };
  if (rates.suspendPerSec === 0 && rates.movePerSec === 0) throw errors.invalidArgument('give suspendPerSec and/or movePerSec above 0 (DELETE /churn stops churn)');
  return rates;
}

export class Churn {
  private timer: NodeJS.Timeout | undefined;
  private rates: ChurnRates = { suspendPerSec: 0, movePerSec: 0 };
  private credit = { suspend: 0, move: 0 };
  private last = 0;
  suspends = 0;
  moves = 0;
  failures = 0;

  constructor(
    private readonly cp: ControlPlane,
    private readonly log: Logger,
  ) {}

  get running(): boolean {
    return this.timer !== undefined;
  }

  start(rates: ChurnRates): void {
    this.stop();
    this.rates = rates;
    this.credit = { suspend: 0, move: 0 };
    this.last = performance.now();
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.timer.unref();
    this.log.info(rates, 'churn started');
  }

  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.rates = { suspendPerSec: 0, movePerSec: 0 };
    this.log.info({ suspends: this.suspends, moves: this.moves, failures: this.failures }, 'churn stopped');
  }

  status() {
    return { running: this.running, ...this.rates, suspends: this.suspends, moves: this.moves, failures: this.failures };
  }

  resetCounters(): void {
    this.suspends = 0;
    this.moves = 0;
    this.failures = 0;
  }

  private tick(): void {
    const now = performance.now();
    const seconds = (now - this.last) / 1000;
    this.last = now;
    this.credit.suspend += this.rates.suspendPerSec * seconds;
    this.credit.move += this.rates.movePerSec * seconds;
    const wantSuspend = Math.floor(this.credit.suspend);
    const wantMove = Math.floor(this.credit.move);
    if (wantSuspend + wantMove === 0) return;
    this.credit.suspend -= wantSuspend;
    this.credit.move -= wantMove;
    const candidates = this.idleRunning();
    for (let i = 0; i < wantSuspend + wantMove && candidates.length > 0; i++) {
      const pick = Math.floor(Math.random() * candidates.length);
      const actor = candidates[pick]!;
      candidates[pick] = candidates[candidates.length - 1]!;
      candidates.pop();
      const move = i >= wantSuspend;
      const op = move ? this.cp.move(actor.ref) : this.cp.suspend(actor.ref);
      op.then(
        () => (move ? this.moves++ : this.suspends++),
        (err: Error) => {
          this.failures++;
          this.log.debug({ actor: actor.key, move, err: err.message }, 'churn operation failed');
        },
      );
    }
  }

  private idleRunning(): ActorRecord[] {
    const out: ActorRecord[] = [];
    for (const a of this.cp.store.actors.values()) if (a.status === 'RUNNING' && !a.lease) out.push(a);
    return out;
  }
}
