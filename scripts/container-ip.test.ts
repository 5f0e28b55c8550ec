import { test } from 'node:test';
import assert from 'node:assert/strict';
import type os from 'node:os';
import { containerIPv4, resolveAutoAdvertise } from './container-ip.js';

function v4(address: string, internal = false): os.NetworkInterfaceInfo {
  return { address, family: 'IPv4', internal, netmask: '255.255.0.0', mac: '00:00:00:00:00:00', cidr: `${address}/16` };
}
function v6(address: string): os.NetworkInterfaceInfo {
  return { address, family: 'IPv6', internal: false, netmask: 'ffff::', mac: '00:00:00:00:00:00', cidr: `${address}/64`, scopeid: 0 };
}

test('containerIPv4 skips loopback and IPv6 and takes the first interface by name', () => {
  const found = containerIPv4({ lo: [v4('127.0.0.1', true)], eth1: [v4('10.1.0.5')], eth0: [v6('fe80::1'), v4('172.18.0.4')] });
  assert.deepEqual(found, { kind: 'ok', ip: '172.18.0.4' });
});

test('containerIPv4 reports when only loopback exists', () => {
  const found = containerIPv4({ lo: [v4('127.0.0.1', true)] });
  assert.equal(found.kind, 'none');
});

test('resolveAutoAdvertise rewrites auto in flags and env, and nothing else', () => {
  const ip = (): string => '172.18.0.9';
  assert.deepEqual(resolveAutoAdvertise(['--advertise-ip', 'auto', '--capacity', '16'], {}, ip), {
    argv: ['--advertise-ip', '172.18.0.9', '--capacity', '16'],
    advertiseEnv: undefined,
  });
  assert.deepEqual(resolveAutoAdvertise(['--advertise-ip=auto'], { WORKER_ADVERTISE_IP: 'AUTO' }, ip), {
    argv: ['--advertise-ip=172.18.0.9'],
    advertiseEnv: '172.18.0.9',
  });
  assert.deepEqual(resolveAutoAdvertise(['--advertise-ip', '10.0.0.1'], { WORKER_ADVERTISE_IP: '10.0.0.2' }, () => assert.fail('not called')), {
    argv: ['--advertise-ip', '10.0.0.1'],
    advertiseEnv: '10.0.0.2',
  });
});
