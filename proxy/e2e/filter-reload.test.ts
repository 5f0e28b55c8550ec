/**
 * End to end, a real proxy: reloading the user filters. Ten reloads (each with a changed module and changed options)
 * during a steady load fail no request, and every client loop sees the generations in order; a reload whose config
 * does not validate, or whose module does not load, keeps the old filters and says why (on the admin route, and in
 * the log on SIGHUP); a module whose import never settles fails only its own reload.
 * Needs processes: SIGHUP reloads, and `--workers 2` fans a reload out to its worker processes.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import { startEdgeStack, type EdgeStack } from '../testing/edge-harness.js';
import type { TestProxy } from '../testing/proxy.js';

const HOST = actorHost('reloaded');

let stack: EdgeStack<TestProxy>;
let dir: string;
let configFile: string;

/** A filter module (plain ESM) tagging every response with its module version and its options' value. */
function writeFilter(version: number | string): void {
  writeFileSync(
    path.join(dir, 'gen.mjs'),
    `export default ({ options }) => ({ name: 'gen', onResponse(ctx, res) { res.headers.set('x-gen', '${version}:' + options.value); } });\n`,
  );
}

function writeConfig(value: number, extra = ''): void {
  writeFileSync(configFile, `${extra}filters:\n  - module: ./gen.mjs\n    options: { value: ${value} }\n`);
}

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'filter-reload-'));
  configFile = path.join(dir, 'actor-edge.yaml');
  writeFilter(0);
  writeConfig(0);
  stack = await startEdgeStack(['--config', configFile, '--access-log', 'off'], 'process');
});

after(async () => {
  await stack?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function get(): Promise<{ status: number; gen: string }> {
  const res = await request(`http://${stack.ingress}/load`, { headers: { host: HOST } });
  await res.body.dump();
  return { status: res.statusCode, gen: String(res.headers['x-gen']) };
}

async function reload(): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await request(`${stack.admin}/filters/reload`, { method: 'POST' });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

// Side by side: the file's proxy (reloaded in turn by the first two tests), and the two tests that start their own.
describe('filter reload', { concurrency: true }, () => {
  describe('the file\'s proxy, reloaded in turn', { concurrency: 1 }, () => {
    test('ten reloads during a steady load: no request fails, each client sees the generations in order', async () => {
      assert.equal((await get()).gen, '0:0');
      let running = true;
      const loop = async (): Promise<{ statuses: number[]; gens: number[] }> => {
        const statuses: number[] = [];
        const gens: number[] = [];
        while (running) {
          const { status, gen } = await get();
          statuses.push(status);
          gens.push(Number(gen.split(':')[0]));
        }
        return { statuses, gens };
      };
      const loops = Array.from({ length: 6 }, loop);
      for (let i = 1; i <= 10; i++) {
        writeFilter(i);
        writeConfig(i);
        const answer = await reload();
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assert.deepEqual(answer.body.filters, ['gen']);
        assert.equal((await get()).gen, `${i}:${i}`, 'a request after the reload runs the new module with the new options');
      }
      running = false;
      const results = await Promise.all(loops);
      const statuses = results.flatMap((r) => r.statuses);
      assert.ok(statuses.length > 0);
      assert.deepEqual([...new Set(statuses)], [200], 'no request failed while reloading');
      for (const { gens } of results) assert.deepEqual(gens, [...gens].sort((a, b) => a - b), 'a client never goes back to older filters');
    });

    test('a reload that fails validation or module loading keeps the old filters and says why', async () => {
      const before = (await get()).gen;
      writeConfig(99, 'cache-ttl-ms: -5\n');
      const invalid = await reload();
      assert.equal(invalid.status, 422);
      assert.equal(invalid.body.error, 'CONFIG_INVALID');
      assert.match(String(invalid.body.reason), /cache-ttl-ms/);
      assert.equal((await get()).gen, before, 'the old filters still answer');

      writeConfig(99, 'unknown-field: 1\n');
      assert.match(String((await reload()).body.reason), /unknown field "unknown-field"/);

      writeConfig(99);
      writeFileSync(path.join(dir, 'gen.mjs'), 'export default (;\n');
      const broken = await reload();
      assert.equal(broken.status, 500);
      assert.equal(broken.body.error, 'FILTER_LOAD_FAILED');
      assert.match(String(broken.body.reason), /gen\.mjs: cannot load module/);
      assert.equal((await get()).gen, before);

      // SIGHUP reloads the same way; a failure is a log line.
      process.kill(stack.proxy.component.pid, 'SIGHUP');
      await waitFor(() => stack.proxy.logs().some((l) => l.msg === 'filter reload failed: keeping the current filters' && l.stage === 'filters'), 5000, 'the failed SIGHUP reload logged');
      writeFilter('hup');
      process.kill(stack.proxy.component.pid, 'SIGHUP');
      await waitFor(async () => (await get()).gen === 'hup:99', 5000, 'a SIGHUP reload takes effect');
    });
  });

  test('--workers 2: the primary fans a reload out to every worker (admin route and SIGHUP)', async () => {
    const clusterDir = mkdtempSync(path.join(os.tmpdir(), 'filter-reload-cluster-'));
    const file = path.join(clusterDir, 'actor-edge.json');
    const module = (version: string): void =>
      writeFileSync(path.join(clusterDir, 'gen.mjs'), `export default () => ({ name: 'gen', onResponse(ctx, res) { res.headers.set('x-gen', '${version}'); } });\n`);
    module('one');
    writeFileSync(file, JSON.stringify({ filters: [{ module: './gen.mjs' }], 'access-log': 'off' }));
    const cluster = await startEdgeStack(['--config', file, '--workers', '2'], 'process');
    const gens = async (n: number): Promise<Set<string>> => {
      const seen = new Set<string>();
      for (let i = 0; i < n; i++) {
        const res = await request(`http://${cluster.ingress}/c${i}`, { headers: { host: HOST }, reset: true });
        await res.body.dump();
        seen.add(`${res.statusCode} ${String(res.headers['x-gen'])}`);
      }
      return seen;
    };
    try {
      assert.deepEqual(await gens(4), new Set(['200 one']));
      module('two');
      const res = await request(`${cluster.admin}/filters/reload`, { method: 'POST' });
      const body = (await res.body.json()) as { workers: { status: number }[] };
      assert.equal(res.statusCode, 200);
      assert.deepEqual(body.workers.map((w) => w.status), [200, 200]);
      assert.deepEqual(await gens(10), new Set(['200 two']));
      module('three');
      process.kill(cluster.proxy.component.pid, 'SIGHUP');
      await waitFor(() => cluster.proxy.logs().some((l) => l.msg === 'filters reloaded on every worker'), 5000, 'the primary logged the fan-out');
      assert.deepEqual(await gens(10), new Set(['200 three']));
    } finally {
      await cluster.close();
      rmSync(clusterDir, { recursive: true, force: true });
    }
  });

  test('a filter module whose import never settles fails its own reload, and every later reload still runs', async () => {
    const hungDir = mkdtempSync(path.join(os.tmpdir(), 'filter-reload-hung-'));
    const file = path.join(hungDir, 'actor-edge.yaml');
    const write = (body: string): void => writeFileSync(path.join(hungDir, 'f.mjs'), body);
    write("export default () => ({ name: 'f', onResponse(ctx, res) { res.headers.set('x-gen', 'first'); } });\n");
    writeFileSync(file, 'filters:\n  - module: ./f.mjs\n');
    // Short, since the hung reload waits it out once; a module that settles loads far within it, even on a machine
    // busy with the file's other tests (its first import, at start, is bounded by the same time).
    const hung = await startEdgeStack(['--config', file, '--access-log', 'off', '--filter-timeout-ms', '1500']);
    const gen = async (): Promise<string> => {
      const res = await request(`http://${hung.ingress}/h`, { headers: { host: HOST } });
      await res.body.dump();
      return String(res.headers['x-gen']);
    };
    const reloadHung = async (): Promise<{ status: number; body: Record<string, unknown> }> => {
      const res = await request(`${hung.admin}/filters/reload`, { method: 'POST' });
      return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
    };
    try {
      assert.equal(await gen(), 'first');
      write('await new Promise(() => {});\nexport default () => ({ name: \'f\' });\n'); // a top-level await that never settles
      const stuck = await reloadHung();
      assert.equal(stuck.status, 500);
      assert.equal(stuck.body.error, 'FILTER_LOAD_FAILED');
      assert.match(String(stuck.body.reason), /did not finish loading within 1500 ms/);
      assert.equal(await gen(), 'first', 'the filters in use stay');
      write("export default () => ({ name: 'f', onResponse(ctx, res) { res.headers.set('x-gen', 'second'); } });\n");
      const next = await reloadHung();
      assert.equal(next.status, 200, 'the next reload is not queued behind the hung one');
      assert.equal(await gen(), 'second');
    } finally {
      await hung.close();
      rmSync(hungDir, { recursive: true, force: true });
    }
  });
});
