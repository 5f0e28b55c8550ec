/** Process CPU and memory counters reported by every component's /stats (the benchmark divides them by requests). */

export interface ProcessStats {
  readonly cpuUserUs: number;
  readonly cpuSystemUs: number;
  readonly rssBytes: number;
  readonly maxRssBytes: number;
}

let baseline = process.cpuUsage();

/** CPU since start or since the last `resetProcessStats()`; RSS now and peak (peak is never reset). */
export function processStats(): ProcessStats {
  const cpu = process.cpuUsage(baseline);
  return {
    cpuUserUs: cpu.user,
    cpuSystemUs: cpu.system,
    rssBytes: process.memoryUsage.rss(),
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
  };
}

export function resetProcessStats(): void {
  baseline = process.cpuUsage();
}
