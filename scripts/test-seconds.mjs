// `npm run test:seconds`: rewrites scripts/test-seconds.json, the per-file wall times `npm test` orders and groups
// its files by on a clone without a report of its own (test-order.mjs), from the last run's reports/test-times.md.
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SECONDS_FILE, reportTimes } from './test-order.mjs';

const report = fileURLToPath(new URL('../reports/test-times.md', import.meta.url));
const times = reportTimes(report);
if (times.size === 0) {
  console.error('test-seconds: no reports/test-times.md to read (run npm test first)');
  process.exit(1);
}
const sorted = Object.fromEntries([...times].sort(([a], [b]) => (a < b ? -1 : 1)).map(([f, s]) => [f, Math.round(s * 10) / 10]));
writeFileSync(SECONDS_FILE, `${JSON.stringify(sorted, null, 1)}\n`);
console.log(`test-seconds: ${times.size} files written to scripts/test-seconds.json`);
