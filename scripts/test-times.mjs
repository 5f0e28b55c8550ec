// A node:test reporter: each test file's wall time (from the runner starting it to its end: the file-level test's
// `test:dequeue` and `test:complete`),
// its number of tests and its result, as a Markdown table sorted slowest first, plus the totals. `npm test` writes
// it to reports/test-times.md (`scripts/run-tests.mjs`); the slowest files are where the suite's time goes.
export default async function* testTimes(source) {
  const files = new Map();
  const started = Date.now();
  for await (const event of source) {
    const file = event.data?.file;
    if (file === undefined) continue;
    const now = Date.now();
    let f = files.get(file);
    if (f === undefined) files.set(file, (f = { first: now, last: now, tests: 0, failed: 0 }));
    if (event.data.name === file) {
      // The file itself: started when dequeued, over when complete.
      if (event.type === 'test:dequeue') f.first = now;
      else if (event.type === 'test:complete') f.last = now;
      continue;
    }
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.details?.type !== 'suite') {
      f.tests++;
      if (event.type === 'test:fail') f.failed++;
    }
  }
  const rows = [...files.entries()].map(([file, f]) => ({ file: file.replace(/^.*?\/dist\//, ''), wall: (f.last - f.first) / 1000, tests: f.tests, failed: f.failed }));
  rows.sort((a, b) => b.wall - a.wall);
  yield `# npm test: wall time per file\n\n`;
  yield `${rows.length} files, ${rows.reduce((a, r) => a + r.tests, 0)} tests, ${((Date.now() - started) / 1000).toFixed(1)} s in all\n\n`;
  yield `| file | wall s | tests | failed |\n|---|---:|---:|---:|\n`;
  for (const r of rows) yield `| ${r.file} | ${r.wall.toFixed(1)} | ${r.tests} | ${r.failed} |\n`;
}
