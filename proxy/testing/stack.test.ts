/**
 * The stack harness itself: `startStack` starts the stub, extproc and a proxy (more with `addProxy`) in the test's
 * process and stops every one of them — with `stop()` or at the end of an `await using` block — and a start that
 * fails stops what it had started before it throws. "Stopped" is read from the process's open TCP servers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { actorName, client, send, startStack } from './stack.js';

/** The TCP servers open in this process. */
const servers = (): number => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;

test('await using: a stack and the proxy added to it serve, and are all stopped at the end of the block', async () => {
  const before = servers();
  {
    await using stack = await startStack({ stub: { workers: 1, actors: 2 } });
    const second = await stack.addProxy(['--actor-cache', 'off']);
    assert.equal((await send(stack.proxy, actorName(0))).status, 200);
    assert.equal((await send(second, actorName(1))).status, 200);
    assert.ok(servers() > before);
  }
  await client.close();
  assert.equal(servers(), before, 'no server left open');
});

test('a proxy that cannot start: the stub and extproc started before it are stopped, and its error is thrown', async () => {
  const before = servers();
  await assert.rejects(startStack({ stub: { workers: 1, actors: 1 }, proxyArgs: ['--no-such-flag'] }), /no-such-flag/);
  assert.equal(servers(), before, 'no server left open');
});
