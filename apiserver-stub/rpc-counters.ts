/** Counts every RPC by method and gRPC status code name: {"ResumeActor": {"OK": 12, "ABORTED": 1}}. */
import { codeName } from './errors.js';

export class RpcCounters {
  private counts = new Map<string, Map<string, number>>();

  count(method: string, code: number): void {
    let byCode = this.counts.get(method);
    if (!byCode) this.counts.set(method, (byCode = new Map()));
    const name = codeName(code);
    byCode.set(name, (byCode.get(name) ?? 0) + 1);
  }

  snapshot(): Record<string, Record<string, number>> {
    const out: Record<string, Record<string, number>> = {};
    for (const [method, byCode] of this.counts) out[method] = Object.fromEntries(byCode);
    return out;
  }

  reset(): void {
    this.counts = new Map();
  }
}
