import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestStack } from './index.js';

const fixture = (name: string): URL => new URL(`../proxy/testing/fixtures/${name}.js`, import.meta.url);

test('startTestStack: the filters given run in a real proxy in front of extproc and the stub\'s demo actors', async () => {
  await using stack = await startTestStack({ filters: [fixture('rewrite-header'), fixture('local-answer')], actors: 3 });
  const answer = await stack.request('actor-001', { path: '/hi?echo_headers=1', headers: { 'x-user': 'ada' } });
  assert.equal(answer.status, 200);
  const app = answer.json<{ actor: string; path: string; headers: Record<string, string> }>();
  assert.equal(app.actor, 'actor-001');
  assert.equal(app.path, '/hi');
  assert.equal(app.headers['x-user'], 'ADA', 'the first filter changed what the actor received');
  assert.equal(app.headers['x-filtered-by'], 'rewrite-header');
  const local = await stack.request('actor-001', { path: '/teapot' });
  assert.equal(local.status, 418, 'the second filter answered');
  assert.equal(local.headers['x-answered-by'], 'local-answer');
  assert.ok(stack.logs().some((l) => l.msg === 'access' && l.status === 418), 'the access log is kept');
  assert.equal(stack.authority('actor-001'), 'actor-001.demo.actors.resources.substrate.ate.dev');
  await stack.stop();
  await stack.stop(); // again: a no-op, as `await using` calls it once more
});

test('startTestStack: a filter that does not load fails the start with the proxy\'s message', async () => {
  await assert.rejects(startTestStack({ filters: [fixture('not-a-filter')] }), /default export must be a filter factory function \(it is a number\)/);
});
