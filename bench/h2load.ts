/**
 * The HTTP/2 (and HTTP/1.1 over TLS) load generator: nghttp2's `h2load` as child processes. h2load takes the
 * request's authority from its URI (or one `-H ':authority: …'` per process) and cannot vary it per request, so
 * each connection is one h2load process with one actor's authority, `-c 1 -m 1` (one stream in flight: the same
 * closed loop as the HTTP/1.1 arms' connections), the connections spread over the plan's first distinct actors.
 * Every response time and status comes from h2load's per-request `--log-file` (microseconds), so latency is
 * recorded the same way as for the HTTP/1.1 arms. The h2load processes' CPU is not measured (reported as 0).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LatencyRecorder } from './latency.js';
import type { LoadHooks, LoadPlan, LoadResult } from './load.js';

/** How the h2load processes speak to the ingress. */
export type H2Protocol = 'h2c' | 'h2' | 'http1.1';

export interface H2loadTarget {
  /** The ingress URL (http:// for h2c and cleartext HTTP/1.1, https:// for TLS). */
  readonly url: string;
  readonly protocol: H2Protocol;
}

/** The h2load arguments of one connection. */
export function h2loadArgs(target: H2loadTarget, authority: string, durationS: number, logFile: string): string[] {
  return [
    '-c', '1', '-m', '1', '-t', '1',
    '-D', `${Math.max(1, Math.round(durationS * 1000))}ms`,
    '-H', `:authority: ${authority}`,
    '--log-file', logFile,
    ...(target.protocol === 'http1.1' ? ['--h1'] : []),
    `${target.url.replace(/\/$/, '')}/`,
  ];
}

/** The distinct authorities of a plan's connections, one per connection (cycling when there are fewer). */
export function authoritiesOf(plan: LoadPlan): string[] {
  const url = plan.urls[0] as string;
  const hosts: string[] = [];
  for (let i = 0; i < plan.connections; i++) {
    for (const r of plan.requestsFor(i, url)) {
      const host = (r.headers as Record<string, string> | undefined)?.['host'];
      if (host !== undefined && !hosts.includes(host)) {
        hosts.push(host);
        break;
      }
    }
  }
  if (hosts.length === 0) throw new Error('h2load: the plan names no host');
  return Array.from({ length: plan.connections }, (_, i) => hosts[i % hosts.length] as string);
}

export interface LogSummary {
  readonly statusCounts: Record<string, number>;
  failed: number;
}

/** Reads one `--log-file` (start µs, status, duration µs per line) into `recorder`; status -1 is a failed stream. */
export function readLog(text: string, recorder: LatencyRecorder, into: LogSummary): void {
  for (const line of text.split('\n')) {
    const [, status, durationUs] = line.split('\t');
    if (status === undefined || durationUs === undefined) continue;
    if (status === '-1') {
      into.failed++;
      continue;
    }
    into.statusCounts[status] = (into.statusCounts[status] ?? 0) + 1;
    recorder.record(Number(durationUs) / 1000);
  }
}

function runOne(args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('h2load', args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    child.on('error', (err) => reject(new Error(`h2load: ${err.message} (Debian: apt-get install nghttp2-client)`)));
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`h2load exited ${code}: ${stderr.trim()}`))));
  });
}

/** Runs `plan` through h2load processes for `durationS` seconds (hooks: only onStart). */
export async function runH2load(target: H2loadTarget, plan: LoadPlan, durationS: number, hooks: LoadHooks = {}): Promise<LoadResult> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-h2load-'));
  try {
    const authorities = authoritiesOf(plan);
    const logs = authorities.map((_, i) => path.join(dir, `c${i}.log`));
    const runs = authorities.map((a, i) => runOne(h2loadArgs(target, a, durationS, logs[i] as string)));
    await hooks.onStart?.();
    await Promise.all(runs);
    const recorder = new LatencyRecorder();
    const summary: LogSummary = { statusCounts: {}, failed: 0 };
    for (const f of logs) readLog(await readFile(f, 'utf8'), recorder, summary);
    const requests = Object.values(summary.statusCounts).reduce((a, b) => a + b, 0);
    const non2xx = Object.entries(summary.statusCounts).reduce((n, [code, c]) => n + (code.startsWith('2') ? 0 : c), 0);
    return {
      requests,
      durationS,
      rps: requests / durationS,
      non2xx,
      errors: summary.failed,
      timeouts: 0,
      statusCounts: summary.statusCounts,
      latency: recorder.summary(),
      loadgenCpuMs: 0,
      loadgenPeakRssBytes: 0,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
