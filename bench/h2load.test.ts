import assert from 'node:assert/strict';
import { test } from 'node:test';
import { authoritiesOf, h2loadArgs, readLog, type LogSummary } from './h2load.js';
import { LatencyRecorder } from './latency.js';
import type { LoadPlan } from './load.js';

test('readLog counts statuses, records durations in ms and counts -1 as a failed stream', () => {
  const recorder = new LatencyRecorder();
  const into: LogSummary = { statusCounts: {}, failed: 0 };
  readLog('1700000000000000\t200\t1500\n1700000000001000\t503\t2500\n1700000000002000\t-1\t900\n\n', recorder, into);
  assert.deepEqual(into, { statusCounts: { '200': 1, '503': 1 }, failed: 1 });
  assert.equal(recorder.count, 2);
  assert.equal(recorder.summary().maxMs, 2.5);
});

test('h2loadArgs: one connection, one stream, the authority, --h1 only for HTTP/1.1', () => {
  const h2c = h2loadArgs({ url: 'http://127.0.0.1:1', protocol: 'h2c' }, 'a.ns.actors', 3, '/x.log');
  assert.deepEqual(h2c.slice(0, 6), ['-c', '1', '-m', '1', '-t', '1']);
  assert.ok(h2c.includes(':authority: a.ns.actors'));
  assert.ok(!h2c.includes('--h1'));
  assert.equal(h2c.at(-1), 'http://127.0.0.1:1/');
  assert.ok(h2loadArgs({ url: 'https://127.0.0.1:1/', protocol: 'http1.1' }, 'a', 3, '/x.log').includes('--h1'));
});

test('authoritiesOf gives every connection a distinct host while there are enough', () => {
  const plan: LoadPlan = {
    urls: ['http://127.0.0.1:1'],
    connections: 3,
    requestsFor: (i) => [{ method: 'GET', path: '/', headers: { host: `h${i % 2}` } }],
  };
  assert.deepEqual(authoritiesOf(plan), ['h0', 'h1', 'h0']);
});
