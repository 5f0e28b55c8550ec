import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LaunchGroup, type Launched } from './launcher.js';

/** A process stand-in that records when it is stopped (the group only calls `stop`). */
function recorded(name: string, stopped: string[]): Launched {
  return { addresses: {}, stop: async () => void stopped.push(name) } as unknown as Launched;
}

test('a start-up that fails part-way stops what it had started, last first, and rethrows its error', async () => {
  const stopped: string[] = [];
  await assert.rejects(
    LaunchGroup.build(async (group) => {
      await group.add(Promise.resolve(recorded('stub', stopped)));
      await group.add(Promise.resolve(recorded('extproc', stopped)));
      await group.add(Promise.reject(new Error('proxy did not become ready')));
      return 'unreachable';
    }),
    /proxy did not become ready/,
  );
  assert.deepEqual(stopped, ['extproc', 'stub']);
});

test('a start-up that succeeds leaves its processes running until stopAll, which stops each once', async () => {
  const stopped: string[] = [];
  const { group, value } = await LaunchGroup.build(async (g) => {
    await g.add(Promise.resolve(recorded('stub', stopped)));
    await g.add(Promise.resolve(recorded('proxy', stopped)));
    return { group: g, value: 42 };
  });
  assert.equal(value, 42);
  assert.deepEqual(stopped, []);
  await group.stopAll();
  await group.stopAll();
  assert.deepEqual(stopped, ['proxy', 'stub']);
});

test('remove stops one process and forgets it, so a restarted successor is the one stopAll stops', async () => {
  const stopped: string[] = [];
  const group = new LaunchGroup();
  await group.add(Promise.resolve(recorded('stub', stopped)));
  const first = await group.add(Promise.resolve(recorded('extproc-1', stopped)));
  await group.remove(first);
  await group.add(Promise.resolve(recorded('extproc-2', stopped)));
  await group.stopAll();
  assert.deepEqual(stopped, ['extproc-1', 'extproc-2', 'stub']);
});
