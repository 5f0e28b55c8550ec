/**
 * What must hold after every fuzz case, whatever its traffic was: the process had no uncaught exception or
 * unhandled rejection, the containment boundary caught no internal error (`/stats` `internalErrors`: each one is a
 * bug the boundary kept from ending the process) and the proxy logged no error (none is expected, whatever a peer
 * sends: a filter that threw is one), the proxy's `requests.inFlight` came back to what it was before the case (so
 * a leak is found at the case that caused it, and does not fail every later case), and nothing connected to the
 * decoy. Also drains the proxy's collected log lines (bounded memory on long runs).
 */
import { request } from 'undici';
import type { ProxyHandle } from '../proxy.js';
import type { Decoy } from './decoy.js';
import type { FaultRecorder } from './faults.js';
import type { StatsDocument } from '../../admin/stats-document.js';

export interface CaseWatch {
  readonly proxy: ProxyHandle;
  readonly faults: FaultRecorder;
  readonly decoy: Decoy;
}

/** What the checks read from the proxy's admin `/stats`. */
export interface CaseStats {
  readonly inFlight: number;
  /** Errors the containment boundary caught, by where. */
  readonly internalErrors: Readonly<Record<string, number>>;
}

export async function caseStats(proxy: ProxyHandle): Promise<CaseStats> {
  const res = await request(`${proxy.admin}/stats`);
  const stats = (await res.body.json()) as StatsDocument;
  return { inFlight: stats.requests.inFlight, internalErrors: stats.internalErrors };
}

/** How long the in-flight count may take to come back once a case's connections are closed. */
const SETTLE_MS = 10_000;

/**
 * The problems after a case (empty when none). `before`: the stats before the case. `errors` counts the messages of
 * the error-level log lines (for the run's summary).
 */
export async function afterCase(watch: CaseWatch, before: CaseStats, errors?: Map<string, number>): Promise<string[]> {
  const problems: string[] = [];
  const deadline = Date.now() + SETTLE_MS;
  let now = await caseStats(watch.proxy);
  while (now.inFlight > before.inFlight && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
    now = await caseStats(watch.proxy);
  }
  if (now.inFlight !== before.inFlight) problems.push(`requests in flight: ${now.inFlight} after the case, ${before.inFlight} before it`);
  for (const [where, n] of Object.entries(now.internalErrors)) {
    const added = n - (before.internalErrors[where] ?? 0);
    if (added > 0) problems.push(`${added} internal error(s) caught by the containment boundary at ${where}`);
  }
  for (const f of watch.faults.take()) problems.push(`${f.kind}: ${f.error}`);
  for (const c of watch.decoy.take()) problems.push(`a connection to the decoy (an address only the client named): ${JSON.stringify(c)}`);
  for (const line of watch.proxy.logs().splice(0)) {
    if (typeof line.level !== 'number' || line.level < 50) continue;
    const key = String(line.msg);
    errors?.set(key, (errors.get(key) ?? 0) + 1);
    const err = line.err as { message?: unknown } | undefined;
    problems.push(`the proxy logged an error: ${key}${err?.message === undefined ? '' : `: ${String(err.message)}`}`);
  }
  return problems;
}

/** How long the proxy may take to drain and stop once a run is over (its drain timeout is 10 s). */
const STOP_MS = 30_000;

/**
 * What must hold at the end of a run: no request in flight, no fault left over, and the proxy drains and stops
 * (nothing the run did may keep it from shutting down: a request or upstream connection left open would).
 */
export async function afterRun(watch: CaseWatch): Promise<string[]> {
  const problems: string[] = [];
  const { inFlight } = await caseStats(watch.proxy);
  if (inFlight !== 0) problems.push(`${inFlight} request(s) still in flight after the run`);
  let timer: NodeJS.Timeout | undefined;
  const stopped = await Promise.race([
    watch.proxy.stop().then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), STOP_MS))),
  ]);
  clearTimeout(timer);
  if (!stopped) problems.push(`the proxy did not drain and stop within ${STOP_MS / 1000} s after the run`);
  for (const f of watch.faults.take()) problems.push(`${f.kind}: ${f.error}`);
  return problems;
}
