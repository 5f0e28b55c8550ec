import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { Departure } from './departure.js';
import { dial } from './dial.js';

test('a departure calls each waiting callback once, in order; a wait stopped is not called; one begun after it is called at once', () => {
  const d = new Departure();
  const calls: string[] = [];
  d.onLeave(() => calls.push('a'));
  const stopB = d.onLeave(() => calls.push('b'));
  d.onLeave(() => calls.push('c'));
  stopB();
  stopB(); // twice: nothing more
  assert.equal(d.left, false);
  d.leave();
  d.leave();
  assert.equal(d.left, true);
  assert.deepEqual(calls, ['a', 'c']);
  d.onLeave(() => calls.push('late'));
  assert.deepEqual(calls, ['a', 'c', 'late']);
});

test('its signal aborts when the actor leaves, whether made before or after', () => {
  const before = new Departure();
  const signal = before.signal;
  let aborted = 0;
  signal.addEventListener('abort', () => aborted++);
  assert.equal(signal.aborted, false);
  assert.equal(before.signal, signal, 'one signal');
  before.leave();
  assert.equal(signal.aborted, true);
  assert.equal(aborted, 1);
  const after = new Departure();
  after.leave();
  assert.equal(after.signal.aborted, true);
});

test('a dial is cancelled by a departure before it or during it, and waits no more once connected', async (t) => {
  const server = net.createServer((s) => s.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const to = { ip: '127.0.0.1', port: (server.address() as net.AddressInfo).port };

  const early = new Departure();
  early.leave();
  assert.deepEqual(await dial(to, 1000, early), { kind: 'cancelled' });

  const during = new Departure();
  const pending = dial(to, 1000, during);
  during.leave();
  assert.deepEqual(await pending, { kind: 'cancelled' });

  // Connected: the dial stops waiting on the departure (a later departure is the tunnel's to handle).
  let waits = 0;
  let stopped = 0;
  const counted = { left: false, onLeave: () => (waits++, () => void stopped++) };
  const connected = await dial(to, 1000, counted);
  assert.equal(connected.kind, 'connected');
  assert.deepEqual({ waits, stopped }, { waits: 1, stopped: 1 });
  if (connected.kind === 'connected') connected.socket.destroy();
});
