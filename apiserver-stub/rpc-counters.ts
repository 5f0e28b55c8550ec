/**
 * Counts every RPC by method and gRPC status code name: {"ResumeActor": {"OK": 12, "ABORTED": 1}}. The counts
 * only go up (the `/metrics` view); `/stats` reports them since the last reset.
 */
import { SinceReset } from '../lib/since-reset.js';
import { grpcCodeName } from '../lib/wire-contract.js';

type Counts = Record<string, Record<string, number>>;

export class RpcCounters {
  private readonly lifetime: Counts = {};
  private readonly sinceReset = new SinceReset(() => this.lifetime);

  count(method: string, code: number): void {
    const byCode = (this.lifetime[method] ??= {});
    const name = grpcCodeName(code);
    byCode[name] = (byCode[name] ?? 0) + 1;
  }

  /** Lifetime counts (never reset). */
  lifetimeCounts(): Readonly<Counts> {
    return this.lifetime;
  }

  /** Counts since the last reset; methods and codes not called since are left out. */
  snapshot(): Counts {
    const out: Counts = {};
    for (const [method, byCode] of Object.entries(this.sinceReset.current())) {
      const called = Object.entries(byCode).filter(([, n]) => n > 0);
      if (called.length > 0) out[method] = Object.fromEntries(called);
    }
    return out;
  }

  reset(): void {
    this.sinceReset.reset();
  }
}
