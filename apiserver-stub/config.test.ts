import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UsageError } from '../lib/flags.js';
import type { ComponentConfigRead } from '../lib/component-config.js';
import { readStubConfig } from './config.js';
import { ipv4Add } from './ip.js';
import { seedActorNames } from './seed.js';
import { readWorkerConfig } from './worker/config.js';

function configOf<C>(read: ComponentConfigRead<C>): C {
  assert.equal(read.kind, 'config');
  return (read as { config: C }).config;
}

test('stub defaults match the documented contract', () => {
  const parsed = readStubConfig([], {});
  assert.ok(Object.isFrozen(parsed));
  const c = configOf(parsed);
  assert.deepEqual({ ...c.listen }, { host: '127.0.0.1', port: 50052 });
  assert.deepEqual({ ...c.admin }, { host: '127.0.0.1', port: 9903 });
  assert.equal(c.workers, 64);
  assert.equal(c.workerIpBase, '127.0.1.1');
  assert.equal(c.workerPort, 8443);
  assert.equal(c.workerCapacity, 1);
  assert.equal(c.actors, 100);
  assert.equal(c.atespace, 'demo');
  assert.equal(c.resolveLatencyMs, 1);
  assert.equal(c.coldResumeMs, 50);
  assert.equal(c.autoCreate, false);
  assert.equal(c.actorSuffix, 'actors.resources.substrate.ate.dev');
  assert.ok(Object.isFrozen(c));
});

test('stub flags come from argv over the environment, and bad values are usage errors', () => {
  const parsed = configOf(readStubConfig(['--workers', '3'], { APISERVER_WORKERS: '9', WORKER_IP_BASE: '127.5.0.1', APISERVER_AUTO_CREATE: 'on', ACTOR_SUFFIX: '.Example.TEST.' }));
  assert.equal(parsed.workers, 3);
  assert.equal(parsed.workerIpBase, '127.5.0.1');
  assert.equal(parsed.autoCreate, true);
  assert.equal(parsed.actorSuffix, 'example.test');
  assert.deepEqual(readStubConfig(['--help'], {}), { kind: 'help' });
  assert.throws(() => readStubConfig(['--worker-ip-base', 'nope'], {}), UsageError);
  assert.throws(() => readStubConfig(['--worker-ip-base', '255.255.255.250', '--workers', '10'], {}), UsageError);
  assert.throws(() => readStubConfig(['--atespace', 'Not_A_Label'], {}), UsageError);
  assert.throws(() => readStubConfig(['--listen', 'nowhere'], {}), UsageError);
});

test('worker flags: advertise ip required, listen ip defaults to it', () => {
  assert.throws(() => readWorkerConfig([], {}), (e: unknown) => e instanceof UsageError && /--advertise-ip/.test(e.message));
  const parsed = configOf(readWorkerConfig(['--advertise-ip', '127.0.2.1'], { WORKER_PORT: '9000', WORKER_APISERVER: 'apiserver:50052' }));
  assert.equal(parsed.listenIp, '127.0.2.1');
  assert.equal(parsed.port, 9000);
  assert.equal(parsed.apiserver, 'apiserver:50052');
  assert.throws(() => readWorkerConfig(['--advertise-ip', 'auto'], {}), UsageError);
});

test('worker addresses carry into the next octet', () => {
  assert.equal(ipv4Add('127.0.1.1', 63), '127.0.1.64');
  assert.equal(ipv4Add('127.0.1.250', 10), '127.0.2.4');
  assert.throws(() => ipv4Add('255.255.255.255', 1), UsageError);
});

test('seeded names are zero-padded to 3 digits, wider when needed', () => {
  assert.deepEqual(seedActorNames(3), ['actor-000', 'actor-001', 'actor-002']);
  assert.equal(seedActorNames(1000).at(-1), 'actor-999');
  const wide = seedActorNames(1001);
  assert.equal(wide[0], 'actor-0000');
  assert.equal(wide.at(-1), 'actor-1000');
  assert.deepEqual(seedActorNames(0), []);
});

test('--destinations: IPv4:PORT entries on addresses of this host, in order; 0.0.0.0, multicast, broadcast, a name or no port is a usage error', () => {
  const parsed = configOf(readStubConfig([], { APISERVER_DESTINATIONS: '127.0.0.2:0,127.0.0.3:9702' }));
  assert.deepEqual(parsed.destinations, [{ host: '127.0.0.2', port: 0 }, { host: '127.0.0.3', port: 9702 }]);
  assert.deepEqual(configOf(readStubConfig([], {})).destinations, []);
  // an interface's address (a container's own, on the network the egress gateway dials it on)
  assert.deepEqual(configOf(readStubConfig(['--destinations', '198.18.0.10:8000'], {})).destinations, [{ host: '198.18.0.10', port: 8000 }]);
  for (const bad of ['0.0.0.0:80', '224.0.0.1:80', '239.1.2.3:80', '255.255.255.255:80']) {
    assert.throws(() => readStubConfig(['--destinations', `127.0.0.2:1,${bad}`], {}), /--destinations\[1\]: .*not an address a destination can listen on/, bad);
  }
  assert.throws(() => readStubConfig(['--destinations', 'destination.test:80'], {}), /--destinations\[0\]: .*not an IPv4 address/);
  assert.throws(() => readStubConfig(['--destinations', '[::1]:80'], {}), /--destinations\[0\]: .*not an IPv4 address/);
  assert.throws(() => readStubConfig(['--destinations', '127.0.0.2'], {}), UsageError);
});
