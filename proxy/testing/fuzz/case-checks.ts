/**
 * What must hold after every fuzz case, whatever its traffic was: the process had no uncaught exception or
 * unhandled rejection, the proxy's `requests.inFlight` came back to what it was before the case (so a leak is
 * found at the case that caused it, and does not fail every later case), and nothing connected to the decoy.
 * Also drains the proxy's collected log lines (bounded memory on long runs), keeping the error-level ones' messages.
 */
import { request } from 'undici';
import type { ProxyHandle } from '../proxy.js';
import type { Decoy } from './decoy.js';
import type { FaultRecorder } from './faults.js';

export interface CaseWatch {
  readonly proxy: ProxyHandle;
  readonly faults: FaultRecorder;
  readonly decoy: Decoy;
}

/** The proxy's requests in flight (admin `/stats`). */
export async function inFlight(proxy: ProxyHandle): Promise<number> {
  const res = await request(`${proxy.admin}/stats`);
  const stats = (await res.body.json()) as { requests: { inFlight: number } };
  return stats.requests.inFlight;
}

/** How long the in-flight count may take to come back once a case's connections are closed. */
const SETTLE_MS = 10_000;

/**
 * The problems after a case (empty when none). `before`: the in-flight count before the case. `errors` collects
 * the messages of the error-level log lines the proxy wrote during the case.
 */
export async function afterCase(watch: CaseWatch, before: number, errors?: Map<string, number>): Promise<string[]> {
  const problems: string[] = [];
  const deadline = Date.now() + SETTLE_MS;
  let now = await inFlight(watch.proxy);
  while (now > before && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
    now = await inFlight(watch.proxy);
  }
  if (now !== before) problems.push(`requests in flight: ${now} after the case, ${before} before it`);
  for (const f of watch.faults.take()) problems.push(`${f.kind}: ${f.error}`);
  for (const c of watch.decoy.take()) problems.push(`a connection to the decoy (an address only the client named): ${JSON.stringify(c)}`);
  const lines = watch.proxy.logs();
  for (const line of lines.splice(0)) {
    if (typeof line.level === 'number' && line.level >= 50 && errors !== undefined) {
      const key = String(line.msg);
      errors.set(key, (errors.get(key) ?? 0) + 1);
    }
  }
  return problems;
}
