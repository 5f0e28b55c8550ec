import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readProxyConfig } from './config.js';

const config = (argv: string[], env: NodeJS.ProcessEnv = {}) => readProxyConfig(argv, env).config;
const TLS = ['--tls-listen', '127.0.0.1:0', '--tls-cert', 'c.pem', '--tls-key', 'k.pem'];

test('--misdirected-421: off by default, on with the HTTPS listener (flag or PROXY_MISDIRECTED_421), refused without it', () => {
  assert.equal(config([])?.ingress.misdirected421, false);
  assert.equal(config([...TLS])?.ingress.misdirected421, false);
  assert.equal(config([...TLS, '--misdirected-421', 'on'])?.ingress.misdirected421, true);
  assert.equal(config(TLS, { PROXY_MISDIRECTED_421: 'on' })?.ingress.misdirected421, true);
  assert.throws(() => config(['--misdirected-421', 'on']), /--misdirected-421 needs --tls-listen/);
  assert.throws(() => config([...TLS, '--misdirected-421', 'maybe']), /expected one of on\|off/);
});

test('--drain-delay-ms: 0 by default (the drain starts at SIGTERM), a whole number of ms otherwise', () => {
  assert.equal(config([])?.ops.drainDelayMs, 0);
  assert.equal(config(['--drain-delay-ms', '5000'])?.ops.drainDelayMs, 5000);
  assert.equal(config([], { PROXY_DRAIN_DELAY_MS: '250' })?.ops.drainDelayMs, 250);
  assert.throws(() => config(['--drain-delay-ms=-1']), /at least 0/);
  assert.throws(() => config(['--drain-delay-ms', '1.5']), /whole number/);
});
