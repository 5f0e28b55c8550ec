import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { durationMs, hardeningProblems } from './hardening.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

test('every compose.yaml service is hardened: read-only, no capabilities, no-new-privileges, limits, sane health checks', () => {
  assert.deepEqual(hardeningProblems(readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8')), []);
});

test('what the rules catch', () => {
  const problems = hardeningProblems(`
services:
  soft:
    image: x
    healthcheck: { test: ["CMD", "true"], interval: 2s }
  ok:
    image: x
    read_only: true
    cap_drop: [ALL]
    security_opt: ["no-new-privileges:true"]
    mem_limit: 64m
    pids_limit: 32
    healthcheck: { test: ["CMD", "true"], interval: 10s }
`);
  assert.deepEqual(problems, [
    'soft: no read-only root file system (read_only: true)',
    'soft: capabilities not dropped (cap_drop: [ALL])',
    'soft: no-new-privileges is not set',
    'soft: no memory limit',
    'soft: no process limit',
    'soft: health check every 2s (at least 5s)',
  ]);
  assert.equal(durationMs('1m30s'), 90_000);
  assert.equal(durationMs('500ms'), 500);
  assert.ok(Number.isNaN(durationMs('soon')));
});
