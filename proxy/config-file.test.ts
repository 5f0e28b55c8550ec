import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readProxyConfig } from './config.js';

function withFile(name: string, text: string, run: (file: string, dir: string) => void): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'config-file-'));
  try {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    run(file, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const YAML = `
listen: 127.0.0.1:9000
actor-cache: off
cache-ttl-ms: 1234
failure-mode-allow: true
strip-headers: [x-a, x-b]
filter-timeout-ms: 250
filters:
  - module: ./filters/cors.js
    options: { origins: [https://app.example], maxAgeSeconds: 60 }
  - /abs/audit.js
`;

test('a YAML config file holds flags by name and the filters with their options (relative to the file)', () => {
  withFile('actor-edge.yaml', YAML, (file, dir) => {
    const config = readProxyConfig(['--config', file], {}).config!;
    assert.equal(config.listeners.listen.port, 9000);
    assert.equal(config.cache.enabled, false);
    assert.equal(config.cache.ttlMs, 1234);
    assert.equal(config.extProc.settings.failureModeAllow, true);
    assert.ok(config.ingress.stripHeaders.includes('x-b'));
    assert.equal(config.chain.filterTimeoutMs, 250);
    assert.equal(config.configFile, file);
    assert.deepEqual(config.chain.filters, [
      { module: path.join(dir, 'filters/cors.js'), options: { origins: ['https://app.example'], maxAgeSeconds: 60 } },
      { module: '/abs/audit.js', options: {} },
    ]);
    assert.ok(Object.isFrozen(config.chain.filters[0]?.options), 'options are frozen');
  });
});

test('flags and environment variables override the file; --filter replaces its filter list', () => {
  withFile('actor-edge.yaml', YAML, (file) => {
    const config = readProxyConfig(['--config', file, '--cache-ttl-ms', '5', '--filter', './mine.js'], { PROXY_LISTEN: '127.0.0.1:7000', PROXY_FILTER_TIMEOUT_MS: '' })
      .config!;
    assert.equal(config.cache.ttlMs, 5);
    assert.equal(config.listeners.listen.port, 7000);
    assert.equal(config.chain.filterTimeoutMs, 250, 'an empty variable does not hide the file');
    assert.deepEqual(config.chain.filters, [{ module: './mine.js', options: {} }]);
  });
  withFile('actor-edge.json', '{"filter-timeout-ms": 77}', (file) => {
    assert.equal(readProxyConfig([], { PROXY_CONFIG: file }).config!.chain.filterTimeoutMs, 77, 'PROXY_CONFIG names the file too');
  });
});

test('errors name the file and the field', () => {
  const cases: [string, string, RegExp][] = [
    ['a.yaml', 'cache-ttl-ms: -1\n', /a\.yaml: --cache-ttl-ms: must be at least 0/],
    ['a.yaml', 'actor-cache: maybe\n', /--actor-cache: expected one of on\|off/],
    ['a.yaml', 'listen: [1, 2]\n', /a\.yaml: listen: expected a single/],
    ['a.yaml', 'nope: 1\n', /unknown field "nope"/],
    ['a.yaml', 'filter: [x.js]\n', /the list is called "filters"/],
    ['a.yaml', 'filters: x.js\n', /filters: expected a list/],
    ['a.yaml', 'filters:\n  - { module: x.js, options: [1] }\n', /filters\[0\]\.options: expected a mapping/],
    ['a.yaml', 'filters:\n  - { path: x.js }\n', /filters\[0\]: unknown field "path"/],
    ['a.yaml', 'failure-mode-allow: perhaps\n', /failure-mode-allow: expected true or false/],
    ['a.yaml', 'listen: [unclosed\n', /not valid YAML/],
    ['a.json', '{', /not valid JSON/],
    ['a.json', '[1]', /must be a mapping/],
    ['a.toml', 'x = 1', /must end in \.json, \.yaml or \.yml/],
  ];
  for (const [name, text, error] of cases) {
    withFile(name, text, (file) => assert.throws(() => readProxyConfig(['--config', file], {}), error, `${name}: ${text}`));
  }
  assert.throws(() => readProxyConfig(['--config', '/nonexistent/actor-edge.yaml'], {}), /cannot read/);
});
