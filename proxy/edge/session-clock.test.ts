import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ServerHttp2Session } from 'node:http2';
import { SessionClock } from './session-clock.js';
import { waitFor } from '../../lib/testing/wait.js';

/** A session as the clock uses it: `ping` throws once destroyed, as node's does (ERR_HTTP2_INVALID_SESSION). */
class FakeSession extends EventEmitter {
  destroyed = false;
  closed = false;
  pings: ((err: Error | null) => void)[] = [];
  destroys = 0;
  ping(cb: (err: Error | null) => void): boolean {
    if (this.destroyed) throw Object.assign(new Error('The session has been destroyed'), { code: 'ERR_HTTP2_INVALID_SESSION' });
    this.pings.push(cb);
    return true;
  }
  close(): void {
    this.closed = true;
  }
  destroy(): void {
    this.destroyed = true;
    this.destroys++;
  }
}

const clockOn = (session: FakeSession, keepAliveMs: number): SessionClock => new SessionClock(session as unknown as ServerHttp2Session, keepAliveMs, 60_000);

test('a PING unanswered within the keep-alive time destroys the session; an answered one asks again', async () => {
  const answered = new FakeSession();
  const clock = clockOn(answered, 20);
  await waitFor(() => answered.pings.length === 1, 5000, 'the first PING');
  answered.pings[0]?.(null);
  await waitFor(() => answered.pings.length === 2, 5000, 'a PING again after the answer');
  assert.equal(answered.destroys, 0);
  clock.stop();

  const silent = new FakeSession();
  clockOn(silent, 20);
  await waitFor(() => silent.destroys >= 1, 5000, 'the silent session destroyed');
  assert.equal(silent.pings.length, 1, 'one PING, never answered');
});

test('a session destroyed without its clock stopped: the next probe does nothing (a PING there would throw)', async () => {
  const session = new FakeSession();
  clockOn(session, 10);
  session.destroyed = true;
  await sleep(40); // an uncaught throw here fails the test file
  assert.equal(session.pings.length, 0);
});

test('a PING answered after the clock stopped does not start it again', async () => {
  const session = new FakeSession();
  const clock = clockOn(session, 10);
  await sleep(20);
  assert.equal(session.pings.length, 1);
  clock.stop();
  session.destroyed = true;
  session.pings[0]?.(null);
  await sleep(40);
  assert.equal(session.pings.length, 1);
});
