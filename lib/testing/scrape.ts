/** Test helper: one series' value from a Prometheus text scrape. */

/** The value of `series` (the name with its labels exactly as exposed, e.g. `x_total{code="200"}`); throws if absent. */
export function metricValue(scrape: string, series: string): number {
  const line = scrape.split('\n').find((l) => l.startsWith(`${series} `));
  if (line === undefined) throw new Error(`${series} is not in the scrape`);
  return Number(line.slice(series.length + 1));
}

/** The sum of every series of `name` whatever its labels (0 when there is none). */
export function metricSum(scrape: string, name: string): number {
  let sum = 0;
  for (const line of scrape.split('\n')) {
    if (line.startsWith(`${name} `) || line.startsWith(`${name}{`)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}
