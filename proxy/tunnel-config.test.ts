import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readProxyConfig } from './config.js';

const config = (argv: string[]) => readProxyConfig(argv, {}).config;

test('tunnel flags: defaults, --upgrade-allow tokens, --connect-listen', () => {
  const d = config([]);
  assert.equal(d?.tunnels.idleTimeoutMs, 300000);
  assert.deepEqual([...(d?.ingress.upgradeTokens ?? [])], ['websocket']);
  assert.equal(d?.listeners.connect, undefined);
  const c = config(['--upgrade-allow', 'Foo', '--connect-listen', '127.0.0.1:0', '--tunnel-idle-timeout-ms', '0']);
  assert.deepEqual([...(c?.ingress.upgradeTokens ?? [])], ['websocket', 'foo']);
  assert.deepEqual(c?.listeners.connect, { host: '127.0.0.1', port: 0 });
  assert.equal(c?.tunnels.idleTimeoutMs, 0);
});

test('--upgrade-allow refuses h2c and values that are not tokens', () => {
  assert.throws(() => config(['--upgrade-allow', 'h2c']), /h2c/);
  assert.throws(() => config(['--upgrade-allow', 'a b']), /not an upgrade token/);
});

test('--connect-tls-listen serves --tls-cert/--tls-key, and cannot start without them', () => {
  const c = config(['--connect-tls-listen', '127.0.0.1:0', '--tls-cert', 'c.pem', '--tls-key', 'k.pem']);
  assert.deepEqual(c?.listeners.connectTls, { listen: { host: '127.0.0.1', port: 0 }, certFile: 'c.pem', keyFile: 'k.pem' });
  assert.equal(c?.listeners.tls, undefined);
  assert.throws(() => config(['--connect-tls-listen', '127.0.0.1:0']), /--connect-tls-listen needs --tls-cert and --tls-key/);
  assert.throws(() => config(['--connect-tls-listen', '127.0.0.1:0', '--tls-cert', 'c.pem']), /--connect-tls-listen needs/);
  assert.throws(() => config(['--tls-cert', 'c.pem', '--tls-key', 'k.pem']), /need --tls-listen or --connect-tls-listen/);
});

test('a connect timeout re-runs, so it must be below the re-run budget (the defaults are: 1 s and 3 s)', () => {
  const d = config([]);
  assert.ok(d !== undefined && d.upstream.connectTimeoutMs < d.chain.rerun.budgetMs);
  assert.equal(d?.upstream.connectTimeoutMs, 1000);
  assert.throws(() => config(['--connect-timeout-ms', '5000']), /--connect-timeout-ms must be below --rerun-budget-ms/);
  assert.throws(() => config(['--rerun-budget-ms', '500']), /--connect-timeout-ms must be below --rerun-budget-ms/);
  assert.equal(config(['--connect-timeout-ms', '200', '--rerun-budget-ms', '500'])?.upstream.connectTimeoutMs, 200);
});
