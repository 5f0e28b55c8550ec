/**
 * What the overload scenario reads about the proxy process while the floods run: its resident memory from
 * /proc/<pid>/status every 100 ms, whether it is still alive, its pid from /server_info, its counters about
 * shedding and refusing (/stats and /metrics), and the open-file limits (raised to the hard limit with util-linux
 * `prlimit` where the soft one is lower).
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { Admin } from './admin.js';
import { overloadCounters } from './overload-report.js';
import type { FdLimit, RssUsage } from './types.js';

const run = promisify(execFile);

/** The open-file limits of a process (`self` or a pid), from /proc/<pid>/limits; null when unreadable. */
export async function readFdLimit(pid: number | 'self'): Promise<FdLimit | null> {
  try {
    const text = await readFile(`/proc/${pid}/limits`, 'utf8');
    const m = /^Max open files\s+(\S+)\s+(\S+)/m.exec(text);
    if (!m) return null;
    const value = (s: string): number => (s === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(s));
    return { soft: value(m[1] as string), hard: value(m[2] as string) };
  } catch {
    return null;
  }
}

/**
 * Raises a process's soft open-file limit to its hard limit (`prlimit --pid`, allowed for one's own processes
 * without privileges); answers the limits afterwards and whether they were raised. Node.js has no setrlimit.
 */
export async function raiseFdLimit(pid: number): Promise<{ limit: FdLimit | null; raised: boolean; error?: string }> {
  const before = await readFdLimit(pid);
  if (before === null || before.soft >= before.hard) return { limit: before, raised: false };
  const hard = before.hard === Number.MAX_SAFE_INTEGER ? 'unlimited' : String(before.hard);
  try {
    await run('prlimit', ['--pid', String(pid), `--nofile=${hard}:${hard}`], { timeout: 5000 });
  } catch (err) {
    return { limit: before, raised: false, error: (err as Error).message.split('\n')[0] ?? 'prlimit failed' };
  }
  const after = await readFdLimit(pid);
  return { limit: after, raised: after !== null && after.soft > before.soft };
}

/** Whether a process exists and is not a zombie (/proc/<pid>/stat). */
export async function processAlive(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** VmRSS and VmHWM of /proc/<pid>/status, bytes; null when the process is gone. */
export async function readRss(pid: number): Promise<{ rss: number; hwm: number } | null> {
  try {
    const text = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
    const rss = kb('VmRSS');
    if (!Number.isFinite(rss)) return null;
    const hwm = kb('VmHWM');
    return { rss, hwm: Number.isFinite(hwm) ? hwm : rss };
  } catch {
    return null;
  }
}

/**
 * Samples a process's resident memory every `intervalMs` from `start()` to `stop()`. At the start it resets the
 * process's VmHWM (writing 5 to /proc/<pid>/clear_refs, allowed for one's own processes), so the VmHWM read at the
 * stop is the peak over exactly that span, a short spike between two samples included; where the reset is refused
 * the peak is the largest sample.
 */
export class RssSampler {
  #timer: NodeJS.Timeout | undefined;
  #samples = 0;
  #max = 0;
  #start: number | null = null;
  #last: number | null = null;
  #hwmReset = false;
  #busy = false;

  constructor(
    private readonly pid: number,
    private readonly intervalMs = 100,
  ) {}

  async start(): Promise<void> {
    try {
      await writeFile(`/proc/${this.pid}/clear_refs`, '5');
      this.#hwmReset = true;
    } catch {
      this.#hwmReset = false;
    }
    await this.#sample();
    this.#start = this.#last;
    this.#timer = setInterval(() => void this.#sample(), this.intervalMs);
  }

  async #sample(): Promise<void> {
    if (this.#busy) return; // a read still under way on a loaded machine: skip this tick
    this.#busy = true;
    try {
      const r = await readRss(this.pid);
      if (r === null) return;
      this.#samples++;
      this.#last = r.rss;
      if (r.rss > this.#max) this.#max = r.rss;
    } finally {
      this.#busy = false;
    }
  }

  /** Stops sampling; the peak since `start()`. `afterBytes` is filled in later by the caller. */
  async stop(): Promise<Omit<RssUsage, 'afterBytes'>> {
    clearInterval(this.#timer);
    const end = await readRss(this.pid);
    if (end !== null) {
      this.#samples++;
      this.#last = end.rss;
      if (end.rss > this.#max) this.#max = end.rss;
    }
    const hwm = this.#hwmReset && end !== null ? end.hwm : 0;
    const peak = Math.max(this.#max, hwm);
    return { peakBytes: this.#samples > 0 ? peak : null, startBytes: this.#start, endBytes: end?.rss ?? this.#last, samples: this.#samples, hwmReset: this.#hwmReset && end !== null };
  }
}

/** The proxy's pid as its admin reports it (/server_info), null when it does not answer. */
export async function serverPid(admin: Admin): Promise<number | null> {
  try {
    const info = (await admin.get('/server_info')) as { pid?: unknown };
    return typeof info.pid === 'number' ? info.pid : null;
  } catch {
    return null;
  }
}

/** The proxy's counters about overload (`overload-report.ts`); null when neither /stats nor /metrics answered. */
export async function readOverloadCounters(admin: Admin): Promise<Record<string, number> | null> {
  const [stats, metrics] = await Promise.all([admin.stats().catch(() => null), admin.get('/metrics').catch(() => null)]);
  if (stats === null && metrics === null) return null;
  return overloadCounters(stats, typeof metrics === 'string' ? metrics : null);
}
