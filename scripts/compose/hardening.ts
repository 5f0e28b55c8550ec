/**
 * What every compose service must run with: a read-only root file system, no capabilities (`cap_drop: [ALL]`), no
 * privilege gain (`no-new-privileges`), a memory and a process limit, and — for the long-running services — a
 * health check no more often than every 5 s. `hardeningProblems` reads a compose document (compose.yaml itself, or
 * what `docker compose config` prints) and lists what is missing; the compose test and a unit test both use it.
 */
import { parse } from 'yaml';

type Service = Record<string, unknown>;

/** `10s`, `1m30s`, `500ms` → milliseconds (compose's duration syntax); NaN when unreadable. */
export function durationMs(text: unknown): number {
  if (typeof text === 'number') return text / 1e6; // `docker compose config` may print nanoseconds
  if (typeof text !== 'string') return Number.NaN;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 1e-3, ns: 1e-6 };
  let total = 0;
  let rest = text.trim();
  if (rest === '') return Number.NaN;
  while (rest.length > 0) {
    const m = /^(\d+(?:\.\d+)?)(ms|us|ns|h|m|s)/.exec(rest);
    if (m === null) return Number.NaN;
    total += Number(m[1]) * (unit[m[2] as string] as number);
    rest = rest.slice(m[0].length);
  }
  return total;
}

/** Every problem of every service (`service: what`), empty when all are hardened. */
export function hardeningProblems(yamlText: string): string[] {
  const doc = parse(yamlText, { merge: true }) as { services?: Record<string, Service> };
  const problems: string[] = [];
  for (const [name, s] of Object.entries(doc.services ?? {})) {
    const say = (what: string): void => void problems.push(`${name}: ${what}`);
    if (s.read_only !== true && s.read_only !== 'true') say('no read-only root file system (read_only: true)');
    const caps = (s.cap_drop as unknown[] | undefined) ?? [];
    if (!caps.includes('ALL')) say('capabilities not dropped (cap_drop: [ALL])');
    const opts = ((s.security_opt as unknown[] | undefined) ?? []).map(String);
    if (!opts.some((o) => /^no-new-privileges(:true|=true)?$/.test(o))) say('no-new-privileges is not set');
    if (s.mem_limit === undefined && (s.deploy as { resources?: { limits?: { memory?: unknown } } } | undefined)?.resources?.limits?.memory === undefined) say('no memory limit');
    if (s.pids_limit === undefined && (s.deploy as { resources?: { limits?: { pids?: unknown } } } | undefined)?.resources?.limits?.pids === undefined) say('no process limit');
    const profiles = (s.profiles as unknown[] | undefined) ?? [];
    if (profiles.length > 0) continue; // a one-off tool (the bench): no health check
    const health = s.healthcheck as { test?: unknown; interval?: unknown } | undefined;
    if (health?.test === undefined) say('no health check');
    else if (!(durationMs(health.interval) >= 5000)) say(`health check every ${String(health.interval)} (at least 5s)`);
  }
  return problems;
}
