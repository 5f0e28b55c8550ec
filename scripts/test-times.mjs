// A node:test reporter: each test file's wall time (from the runner starting it to its end: the file-level test's
// `test:dequeue` and `test:complete`),
// its number of tests and its result, as a Markdown table sorted slowest first, plus the totals. `npm test` writes
// it to reports/test-times.md (`scripts/run-tests.mjs`); the slowest files are where the suite's time goes.
//
// Files that shared a process (a group, `test-groups.mjs`) have no start and end of their own: each is listed with
// the time its top-level tests took (marked "shared"), and the group with its whole wall time and its files.
import { readFileSync } from 'node:fs';
import { GROUP_DIR, membersOf } from './test-groups.mjs';

export default async function* testTimes(source) {
  const files = new Map();
  const started = Date.now();
  for await (const event of source) {
    const file = event.data?.file;
    if (file === undefined) continue;
    const now = Date.now();
    let f = files.get(file);
    if (f === undefined) files.set(file, (f = { first: now, last: now, own: false, fileFailed: 0, testMs: 0, tests: 0, failed: 0 }));
    if (event.data.name === file) {
      // The file itself: started when dequeued, over when complete.
      f.own = true;
      if (event.type === 'test:dequeue') f.first = now;
      else if (event.type === 'test:complete') f.last = now;
      else if (event.type === 'test:fail') f.fileFailed = 1;
      continue;
    }
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0) f.testMs += event.data.details?.duration_ms ?? 0;
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.details?.type !== 'suite') {
      f.tests++;
      if (event.type === 'test:fail') f.failed++;
    }
  }
  const rows = [...files.entries()].map(([file, f]) => {
    const relative = file.replace(/^.*?\/dist\//, '');
    const wall = f.own ? (f.last - f.first) / 1000 : f.testMs / 1000;
    if (relative.startsWith(`${GROUP_DIR}/`)) {
      const members = membersOf(readFileSync(file, 'utf8'));
      return { file: `${relative} (one process: ${members.join(', ')})`, wall, tests: 0, failed: f.fileFailed, group: true };
    }
    return { file: f.own ? relative : `${relative} (shared)`, wall, tests: f.tests, failed: f.failed, group: false };
  });
  rows.sort((a, b) => b.wall - a.wall);
  const groups = rows.filter((r) => r.group).length;
  yield `# npm test: wall time per file\n\n`;
  yield `${rows.length - groups} files (${groups} groups sharing a process), ${rows.reduce((a, r) => a + r.tests, 0)} tests, ${((Date.now() - started) / 1000).toFixed(1)} s in all\n\n`;
  yield `| file | wall s | tests | failed |\n|---|---:|---:|---:|\n`;
  for (const r of rows) yield `| ${r.file} | ${r.wall.toFixed(1)} | ${r.tests} | ${r.failed} |\n`;
}
