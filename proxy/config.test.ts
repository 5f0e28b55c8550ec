import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { flagSetHelp, UsageError } from '../lib/flags.js';
import { PROXY_FLAG_SET, readProxyConfig, type ProxyConfig } from './config.js';

function withDir(run: (write: (name: string, text: string) => string, dir: string) => void): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'proxy-config-'));
  try {
    run((name, text) => {
      const file = path.join(dir, name);
      writeFileSync(file, text);
      return file;
    }, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function configOf(argv: string[], env: NodeJS.ProcessEnv = {}): { config: ProxyConfig; warnings: readonly string[] } {
  const read = readProxyConfig(argv, env);
  assert.equal(read.kind, 'config');
  return read as { config: ProxyConfig; warnings: readonly string[] };
}

const NESTED = `
listeners:
  http: 127.0.0.1:9000
ingress:
  stripHeaders: [x-a, x-b]
  xffTrustedHops: 1
chain:
  filterTimeoutMs: 250
  maxReruns: 3
  filters:
    - module: ./filters/cors.js
      options: { origins: [https://app.example], maxAgeSeconds: 60 }
    - /abs/audit.js
cache:
  enabled: off
  ttlMs: 1234
extProc:
  failureModeAllow: true
  processingMode: [request_body_mode=BUFFERED]
upstream:
  maxConnections: 16
tunnels:
  idleTimeoutMs: 1000
admin:
  listen: 127.0.0.1:9999
ops:
  accessLog: off
`;

const FLAT = `
listen: 127.0.0.1:9000
strip-headers: [x-a, x-b]
xff-trusted-hops: 1
filter-timeout-ms: 250
max-reruns: 3
filters:
  - module: ./filters/cors.js
    options: { origins: [https://app.example], maxAgeSeconds: 60 }
  - /abs/audit.js
actor-cache: off
cache-ttl-ms: 1234
failure-mode-allow: true
extproc-processing-mode: [request_body_mode=BUFFERED]
upstream-max-connections: 16
tunnel-idle-timeout-ms: 1000
admin: 127.0.0.1:9999
access-log: off
`;

test('a nested config file and the same settings as a flat one produce the same frozen config', () => {
  withDir((write, dir) => {
    const nestedFile = write('nested.yaml', NESTED);
    const flatFile = write('flat.yaml', FLAT);
    const nested = configOf(['--config', nestedFile]);
    const flat = configOf(['--config', flatFile]);
    assert.deepEqual({ ...flat.config, configFile: undefined }, { ...nested.config, configFile: undefined });
    assert.ok(Object.isFrozen(nested.config));
    assert.deepEqual(nested.warnings, []);
    assert.equal(flat.warnings.length, 14, 'one deprecation warning per flat key');
    assert.ok(flat.warnings.includes(`config file ${flatFile}: "filters" at the top level is deprecated: use chain.filters`));
    assert.ok(flat.warnings.includes(`config file ${flatFile}: "actor-cache" at the top level is deprecated: use cache.enabled`));
    const c = nested.config;
    assert.equal(c.listeners.listen.port, 9000);
    assert.equal(c.cache.enabled, false);
    assert.equal(c.cache.ttlMs, 1234);
    assert.equal(c.extProc.settings.failureModeAllow, true);
    assert.equal(c.extProc.settings.processingMode.requestBodyMode, 'BUFFERED');
    assert.equal(c.chain.rerun.maxReruns, 3);
    assert.equal(c.upstream.maxConnections, 16);
    assert.equal(c.tunnels.idleTimeoutMs, 1000);
    assert.equal(c.ingress.xffTrustedHops, 1);
    assert.ok(c.ingress.stripHeaders.includes('x-b'));
    assert.equal(c.ops.admin.port, 9999);
    assert.deepEqual(c.ops.accessLog, { kind: 'off' });
    assert.equal(c.chain.filterTimeoutMs, 250);
    assert.equal(c.configFile, nestedFile);
    for (const slice of Object.values(c)) if (typeof slice === 'object' && slice !== null) assert.ok(Object.isFrozen(slice), 'every slice is frozen');
    assert.deepEqual(c.chain.filters, [
      { module: path.join(dir, 'filters/cors.js'), options: { origins: ['https://app.example'], maxAgeSeconds: 60 } },
      { module: '/abs/audit.js', options: {} },
    ]);
    assert.ok(Object.isFrozen(c.chain.filters[0]?.options), 'options are frozen');
  });
});

test('flags and variables override the nested file; --filter replaces its filter list', () => {
  withDir((write) => {
    const file = write('a.yaml', NESTED);
    const { config } = configOf(['--config', file, '--cache-ttl-ms', '5', '--filter', './mine.js'], { PROXY_LISTEN: '127.0.0.1:7000', PROXY_FILTER_TIMEOUT_MS: '' });
    assert.equal(config.cache.ttlMs, 5);
    assert.equal(config.listeners.listen.port, 7000);
    assert.equal(config.chain.filterTimeoutMs, 250, 'an empty variable does not hide the file');
    assert.deepEqual(config.chain.filters, [{ module: './mine.js', options: {} }]);
    assert.equal(configOf([], { PROXY_CONFIG: file }).config.cache.ttlMs, 1234, 'PROXY_CONFIG names the file too');
  });
});

test('errors in the nested file name the field', () => {
  const cases: [string, RegExp][] = [
    ['cache:\n  ttl: 5\n', /unknown field "cache\.ttl"/],
    ['cache:\n  ttlMs: -1\n', /cache\.ttlMs: must be >= 0/],
    ['listeners:\n  http: nowhere\n', /listeners\.http \(--listen\): /],
    ['chain:\n  filters: x.js\n', /chain\.filters: must be array/],
    ['chain:\n  filters:\n    - { path: x.js }\n', /unknown field "chain\.filters\[0\]\.path"/],
    ['chain:\n  filters:\n    - { module: x.js, options: [1] }\n', /chain\.filters\[0\]\.options: must be object/],
    ['extProc:\n  requestAttributes: [request.nope]\n', /extProc\.requestAttributes \(--extproc-request-attributes\): "request\.nope" is not supported/],
  ];
  withDir((write) => {
    for (const [text, error] of cases) {
      const file = write('a.yaml', text);
      assert.throws(() => readProxyConfig(['--config', file], {}), (e: unknown) => e instanceof UsageError && error.test(e.message), text);
    }
  });
});

test('every proxy variable has the PROXY_ prefix; the former names still work, each with a deprecation warning', () => {
  const former = configOf([], { ACTOR_CACHE: 'off', ACTOR_SUFFIX: 'Old.Example.', WORKER_PORT: '9443' });
  assert.equal(former.config.cache.enabled, false);
  assert.equal(former.config.actorSuffix, 'old.example');
  assert.equal(former.config.resolver.workerPort, 9443);
  assert.deepEqual([...former.warnings].sort(), [
    'environment variable ACTOR_CACHE is deprecated: use PROXY_ACTOR_CACHE',
    'environment variable ACTOR_SUFFIX is deprecated: use PROXY_ACTOR_SUFFIX',
    'environment variable WORKER_PORT is deprecated: use PROXY_WORKER_PORT',
  ]);
  const both = configOf([], { PROXY_ACTOR_CACHE: 'on', ACTOR_CACHE: 'off', PROXY_ACTOR_SUFFIX: 'new.example', ACTOR_SUFFIX: 'old.example' });
  assert.equal(both.config.cache.enabled, true, 'the PROXY_ name wins');
  assert.equal(both.config.actorSuffix, 'new.example');
  assert.deepEqual(both.warnings, [], 'a former name beside the new one is not read, and not warned about');
  for (const [name, spec] of Object.entries(PROXY_FLAG_SET.flags)) assert.match(spec.env, /^PROXY_/, `--${name}`);
  for (const [name, spec] of Object.entries(PROXY_FLAG_SET.flags)) {
    if (name !== 'config') assert.ok('section' in spec && spec.section !== undefined, `--${name} is declared in a config file section`);
  }
});

test('the dropped --extproc-response-headers is refused (processing_mode response_header_mode sets it)', () => {
  assert.throws(() => readProxyConfig(['--extproc-response-headers', 'send'], {}), UsageError);
  assert.equal(configOf(['--extproc-processing-mode', 'response_header_mode=SEND']).config.extProc.settings.processingMode.responseHeaderMode, 'SEND');
});

test('the benchmark-only resolver flags sit in their own section, after every production one', () => {
  const benchmark = Object.entries(PROXY_FLAG_SET.flags).filter(([, s]) => 'section' in s && s.section === 'benchmark').map(([n]) => n);
  assert.deepEqual(benchmark.sort(), ['apiserver', 'resolver', 'worker-port']);
  assert.equal(Object.keys(PROXY_FLAG_SET.sections).at(-1), 'benchmark');
  const help = flagSetHelp(PROXY_FLAG_SET);
  const heading = help.indexOf('\nbenchmark: Not for production');
  assert.ok(heading > help.indexOf('  --drain-timeout-ms '), 'the benchmark section comes last');
  for (const flag of ['--resolver', '--apiserver', '--worker-port']) assert.ok(help.indexOf(`\n  ${flag} `) > heading, `${flag} is listed under it`);
});

test('budgets and overload: the defaults, the overload section and the ext_proc queue, each in its own slice; a shed-all threshold must be above its shed-misses one', () => {
  const MiB = 2 ** 20;
  const { config: d } = configOf([], {});
  assert.deepEqual(d.overload, {
    replayBufferBudgetBytes: 16 * MiB,
    bodyInflightBudgetBytes: 8 * MiB,
    maxConnections: 20000,
    triggers: { loopDelayMs: { shedMisses: 500, shedAll: 2000 }, heapUsedBytes: { shedMisses: 256 * MiB, shedAll: 320 * MiB } },
  });
  assert.ok(Object.isFrozen(d.overload.triggers.heapUsedBytes));
  assert.deepEqual([d.extProc.maxStreams, d.extProc.queueMaxWaiting, d.extProc.queueTimeoutMs], [256, 1024, 1000]);
  withDir((write) => {
    const file = write('o.yaml', 'overload:\n  maxConnections: 3\n  bodyInflightBudgetBytes: 0\n  heapBytes: 0\n  heapCriticalBytes: 0\nextProc:\n  maxStreams: 2\n  queueTimeoutMs: 50\n');
    const { config } = configOf(['--config', file, '--overload-loop-delay-ms', '0'], { PROXY_REPLAY_BUFFER_BUDGET_BYTES: '1024', PROXY_EXTPROC_QUEUE_MAX_WAITING: '8' });
    assert.deepEqual(config.overload, {
      replayBufferBudgetBytes: 1024,
      bodyInflightBudgetBytes: 0,
      maxConnections: 3,
      triggers: { loopDelayMs: { shedMisses: 0, shedAll: 2000 }, heapUsedBytes: { shedMisses: 0, shedAll: 0 } },
    });
    assert.deepEqual([config.extProc.maxStreams, config.extProc.queueMaxWaiting, config.extProc.queueTimeoutMs], [2, 8, 50]);
  });
  for (const argv of [
    ['--overload-heap-bytes', '100', '--overload-heap-critical-bytes', '100'],
    ['--overload-loop-delay-ms', '300', '--overload-loop-delay-critical-ms', '200'],
  ]) {
    assert.throws(() => readProxyConfig(argv, {}), (e: unknown) => e instanceof UsageError && /critical-.* must be above --overload-/.test(e.message), argv.join(' '));
  }
  assert.throws(() => readProxyConfig(['--max-connections', '-1'], {}), UsageError);
  assert.throws(() => readProxyConfig(['--body-inflight-budget-bytes', '-1'], {}), UsageError);
});

test('the egress verdict cache: on, 5 s and 100000 entries by default; flags, variables and the egressCache section set it; a TTL or a bound below 1 is refused', () => {
  const { config: d } = configOf([], {});
  assert.deepEqual(d.egressCache, { enabled: true, ttlMs: 5000, maxEntries: 100000 });
  assert.ok(Object.isFrozen(d.egressCache));
  const { config: flags } = configOf(['--egress-cache', 'off', '--egress-cache-ttl-ms', '250'], { PROXY_EGRESS_CACHE_MAX_ENTRIES: '7' });
  assert.deepEqual(flags.egressCache, { enabled: false, ttlMs: 250, maxEntries: 7 });
  withDir((write) => {
    const file = write('e.yaml', 'egressCache:\n  enabled: off\n  ttlMs: 1000\n');
    assert.deepEqual(configOf(['--config', file], {}).config.egressCache, { enabled: false, ttlMs: 1000, maxEntries: 100000 });
  });
  for (const argv of [['--egress-cache-ttl-ms', '0'], ['--egress-cache-max-entries', '0'], ['--egress-cache', 'maybe']]) {
    assert.throws(() => readProxyConfig(argv, {}), UsageError, argv.join(' '));
  }
});
