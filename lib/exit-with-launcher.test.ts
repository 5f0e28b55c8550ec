/**
 * Needs processes: the preload acts on a launched process's stdin pipe. A process whose worker thread starts (and
 * so loads the preload too, with an already-ended stdin of its own) keeps running; closing its stdin pipe, as the
 * launcher's death would, stops it as SIGTERM does.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawnProcess } from './launch.js';

test('a worker thread does not stop its process; the launcher\'s pipe closing does', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'exit-with-launcher-'));
  const script = path.join(dir, 'thread.mjs');
  writeFileSync(path.join(dir, 'worker.mjs'), "import { parentPort } from 'node:worker_threads';\nparentPort.postMessage('up');\nsetInterval(() => {}, 1000);\n");
  writeFileSync(
    script,
    "import { Worker } from 'node:worker_threads';\n" +
      "const w = new Worker(new URL('./worker.mjs', import.meta.url));\n" +
      "w.once('message', () => console.log(JSON.stringify({ msg: 'ready', addresses: { thread: 'up' } })));\n" +
      "process.on('SIGTERM', () => { console.log('sigterm'); process.exit(0); });\n" +
      'setInterval(() => {}, 1000);\n',
  );
  const child = spawnProcess('thread', script, []);
  try {
    assert.deepEqual({ ...(await child.ready) }, { thread: 'up' });
    await sleep(300); // the thread's preload has run: its stdin ended at once
    assert.equal(child.running, true, `the process stopped when its thread started:\n${child.lines.join('\n')}`);
    child.child.stdin?.end();
    await child.exited;
    assert.ok(child.lines.includes('sigterm'), `stopped as on SIGTERM:\n${child.lines.join('\n')}`);
  } finally {
    await child.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
