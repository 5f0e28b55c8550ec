import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defineFlagSet, UsageError, type FlagSpecs, type FlagValues } from './flags.js';
import { configFlag, readConfigFile } from './config-file.js';
import { readComponentConfig } from './component-config.js';

const FLAGS = {
  config: configFlag('T_CONFIG', 'thing'),
  listen: { type: 'string', env: 'T_LISTEN', default: '127.0.0.1:1', section: 'listeners', key: 'http', help: 'listen' },
  'cache-ttl-ms': { type: 'number', env: 'T_TTL', default: 5, min: 1, max: 100, section: 'cache', help: 'ttl' },
  'actor-cache': { type: 'choice', env: 'T_CACHE', choices: ['on', 'off'], default: 'on', section: 'cache', key: 'enabled', help: 'cache' },
  mode: { type: 'choice', env: 'T_MODE', choices: ['fast', 'slow'], default: 'fast', section: 'cache', help: 'mode' },
  quiet: { type: 'boolean', env: 'T_QUIET', default: false, section: 'ops', help: 'quiet' },
  'strip-headers': { type: 'list', env: 'T_STRIP', section: 'ops', help: 'strip' },
  'admin-token': { type: 'string?', env: 'T_TOKEN', section: 'ops', key: 'adminToken', secret: true, help: 'token' },
  ratio: { type: 'number', env: 'T_RATIO', default: 0.5, float: true, max: 1, section: 'ops', help: 'ratio' },
} as const satisfies FlagSpecs;

const SET = defineFlagSet({
  command: 'thing',
  summary: 'A thing.',
  sections: { listeners: 'Where.', cache: 'The cache.', ops: 'Operations.' },
  flags: FLAGS,
  fileFields: { 'cache.extra': { help: 'an extra list', schema: { type: 'array', items: { type: 'string' } }, flat: 'extras' } },
});

type Values = FlagValues<typeof FLAGS>;
const read = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  const r = readComponentConfig(SET, (v: Values, ctx) => ({ v, ctx }), argv, env);
  assert.equal(r.kind, 'config');
  return r as Extract<typeof r, { kind: 'config' }>;
};

function withDir(run: (dir: string, write: (name: string, text: string) => string) => void): void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'config-file-'));
  try {
    run(dir, (name, text) => {
      const file = path.join(dir, name);
      writeFileSync(file, text);
      return file;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const NESTED = `
listeners:
  http: 127.0.0.1:9000
cache:
  ttlMs: 42
  enabled: off
  extra: [a, b]
ops:
  quiet: true
  stripHeaders: [x-a, x-b]
  ratio: 0.25
`;

const FLAT = `
listen: 127.0.0.1:9000
cache-ttl-ms: 42
actor-cache: off
extras: [a, b]
quiet: true
strip-headers: [x-a, x-b]
ratio: 0.25
`;

test('a nested file and the same settings in the flat form give the same values; the flat keys are warned about', () => {
  withDir((_dir, write) => {
    const nested = read(['--config', write('n.yaml', NESTED)]);
    const flat = read(['--config', write('f.yaml', FLAT)]);
    assert.deepEqual({ ...flat.config.v, config: undefined }, { ...nested.config.v, config: undefined });
    assert.equal(nested.config.v.listen, '127.0.0.1:9000');
    assert.equal(nested.config.v['cache-ttl-ms'], 42);
    assert.equal(nested.config.v['actor-cache'], 'off');
    assert.deepEqual(nested.config.v['strip-headers'], ['x-a', 'x-b']);
    assert.equal(nested.config.v.ratio, 0.25);
    assert.deepEqual(nested.fields, { 'cache.extra': ['a', 'b'] });
    assert.deepEqual(flat.fields, nested.fields);
    assert.deepEqual(nested.warnings, []);
    assert.ok(flat.warnings.some((w) => /"cache-ttl-ms" at the top level is deprecated: use cache\.ttlMs/.test(w)));
    assert.ok(flat.warnings.some((w) => /"extras" at the top level is deprecated: use cache\.extra/.test(w)));
    assert.equal(flat.warnings.length, 7);
    assert.equal(nested.config.ctx.sources['cache-ttl-ms'], `config file ${nested.file}: cache.ttlMs`);
  });
});

test('flags and variables override the file, which overrides the defaults; JSON works the same', () => {
  withDir((_dir, write) => {
    const file = write('a.json', JSON.stringify({ cache: { ttlMs: 42, mode: 'slow' }, listeners: { http: 'file:1' } }));
    const r = read(['--config', file, '--cache-ttl-ms', '7'], { T_LISTEN: 'env:1' });
    assert.equal(r.config.v['cache-ttl-ms'], 7);
    assert.equal(r.config.v.listen, 'env:1');
    assert.equal(r.config.v.mode, 'slow');
    assert.equal(r.config.v.quiet, false);
    assert.equal(read([], { T_CONFIG: file }).config.v.mode, 'slow', 'the variable names the file too');
  });
});

test('errors name the file, the field and the reason', () => {
  const cases: [string, string, RegExp][] = [
    ['a.yaml', 'cache:\n  ttlMS: 5\n', /a\.yaml: unknown field "cache\.ttlMS" \(did you mean cache\.ttlMs\?\)/],
    ['a.yaml', 'cache:\n  ttl-ms: 5\n', /unknown field "cache\.ttl-ms" \(did you mean cache\.ttlMs\?\)/],
    ['a.yaml', 'cahce:\n  ttlMs: 5\n', /unknown field "cahce"/],
    ['a.yaml', 'nope: 1\n', /unknown field "nope"/],
    ['a.yaml', 'cache:\n  ttlMs: soon\n', /cache\.ttlMs: must be integer/],
    ['a.yaml', 'cache:\n  ttlMs: 1.5\n', /cache\.ttlMs: must be integer/],
    ['a.yaml', 'cache:\n  ttlMs: 0\n', /cache\.ttlMs: must be >= 1/],
    ['a.yaml', 'cache:\n  ttlMs: 101\n', /cache\.ttlMs: must be <= 100/],
    ['a.yaml', 'cache:\n  mode: quick\n', /cache\.mode: must be one of fast, slow/],
    ['a.yaml', 'cache:\n  enabled: maybe\n', /cache\.enabled: must be one of on, off/],
    ['a.yaml', 'cache: 5\n', /cache: must be object/],
    ['a.yaml', 'ops:\n  quiet: perhaps\n', /ops\.quiet: must be boolean/],
    ['a.yaml', 'ops:\n  stripHeaders: x-a\n', /ops\.stripHeaders: must be array/],
    ['a.yaml', 'ops:\n  stripHeaders: [1]\n', /ops\.stripHeaders\[0\]: must be string/],
    ['a.yaml', 'listeners:\n  http: [1, 2]\n', /listeners\.http: must be string/],
    ['a.yaml', 'ops:\n  adminToken: { path: x }\n', /unknown field "ops\.adminToken\.path"/],
    ['a.yaml', 'cache-ttl-ms: 5\ncache:\n  ttlMs: 6\n', /both "cache-ttl-ms" and cache\.ttlMs are set/],
    ['a.yaml', 'cache-ttl-ms: 0\n', /a\.yaml: cache-ttl-ms \(cache\.ttlMs\): must be >= 1/],
    ['a.yaml', 'extras: [1]\n', /extras\[0\] \(cache\.extra\[0\]\): must be string/],
    ['a.yaml', 'listen: [unclosed\n', /not valid YAML/],
    ['a.json', '{', /not valid JSON/],
    ['a.json', '[1]', /must be a mapping/],
    ['a.toml', 'x = 1', /must end in \.json, \.yaml or \.yml/],
  ];
  withDir((_dir, write) => {
    for (const [name, text, error] of cases) {
      const file = write(name, text);
      assert.throws(() => read(['--config', file]), (e: unknown) => e instanceof UsageError && error.test(e.message), `${name}: ${text}`);
    }
  });
  assert.throws(() => read(['--config', '/nonexistent/a.yaml']), /config file \/nonexistent\/a\.yaml: cannot read/);
});

test('a builder\'s error about a flag the file set is told as the file\'s field', () => {
  withDir((_dir, write) => {
    const file = write('a.yaml', 'listeners:\n  http: nowhere\n');
    const build = (v: Values): string => {
      if (!v.listen.includes(':')) throw new UsageError(`--listen: expected HOST:PORT, got "${v.listen}"`);
      return v.listen;
    };
    assert.throws(
      () => readComponentConfig(SET, build, ['--config', file], {}),
      (e: unknown) => e instanceof UsageError && e.message === `config file ${file}: listeners.http (--listen): expected HOST:PORT, got "nowhere"`,
    );
    assert.throws(() => readComponentConfig(SET, build, ['--listen', 'nowhere'], {}), (e: unknown) => e instanceof Error && /^--listen: expected/.test(e.message));
  });
});

test('a secret may name a file (relative to the config file), read only when nothing overrides it', () => {
  withDir((dir, write) => {
    write('token', 's3cret\n');
    const file = write('a.yaml', 'ops:\n  adminToken: { file: token }\n');
    assert.equal(read(['--config', file]).config.v['admin-token'], 's3cret', 'the trailing newline is not part of it');
    const missing = write('b.yaml', 'ops:\n  adminToken: { file: absent }\n');
    assert.equal(read(['--config', missing], { T_TOKEN: 'from-env' }).config.v['admin-token'], 'from-env', 'an overridden file is not read');
    assert.throws(() => read(['--config', missing]), (e: unknown) => e instanceof UsageError && e.message.includes(`ops.adminToken: file not found: ${path.join(dir, 'absent')}`));
    write('empty', '\n');
    assert.throws(() => read(['--config', write('c.yaml', 'ops:\n  adminToken: { file: empty }\n')]), /is empty/);
    assert.equal(read(['--config', write('d.yaml', 'ops:\n  adminToken: inline\n')]).config.v['admin-token'], 'inline');
  });
});

test('on/off choices take YAML booleans; values from the file are frozen', () => {
  withDir((_dir, write) => {
    const r = read(['--config', write('a.json', '{"cache": {"enabled": false}, "ops": {"stripHeaders": ["x"]}}')]);
    assert.equal(r.config.v['actor-cache'], 'off');
    assert.ok(Object.isFrozen(r.config.v['strip-headers']));
    const direct = readConfigFile(write('b.yaml', 'cache:\n  extra: [z]\n'), SET);
    assert.ok(Object.isFrozen(direct.fields['cache.extra']));
  });
});

test('an empty file is no settings', () => {
  withDir((_dir, write) => {
    assert.equal(read(['--config', write('a.yaml', '# nothing yet\n')]).config.v['cache-ttl-ms'], 5);
  });
});
