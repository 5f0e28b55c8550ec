import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defineFlagSet, fileKey, flagSetHelp, formatHelp, readFlags, UsageError, type FlagSpecs } from './flags.js';

const specs = {
  listen: { type: 'string', env: 'T_LISTEN', default: '127.0.0.1:1', help: 'listen address' },
  budget: { type: 'number', env: 'T_BUDGET', default: 10, min: 1, help: 'budget' },
  cache: { type: 'choice', env: 'T_CACHE', choices: ['on', 'off'], default: 'on', help: 'cache' },
  quiet: { type: 'boolean', env: 'T_QUIET', default: false, help: 'quiet' },
  filter: { type: 'list', env: 'T_FILTERS', help: 'filters' },
  opt: { type: 'string?', env: 'T_OPT', help: 'optional' },
} as const satisfies FlagSpecs;

test('defaults apply when nothing is given', () => {
  const { values, help } = readFlags(specs, [], {});
  assert.equal(help, false);
  assert.deepEqual({ ...values }, { listen: '127.0.0.1:1', budget: 10, cache: 'on', quiet: false, filter: [], opt: undefined });
  assert.ok(Object.isFrozen(values));
});

test('argv wins over the environment, which wins over defaults', () => {
  const env = { T_BUDGET: '20', T_CACHE: 'OFF', T_QUIET: 'on', T_FILTERS: 'a.js, b.js', T_LISTEN: 'x:1' };
  const { values } = readFlags(specs, ['--budget', '30', '--filter', 'c.js'], env);
  assert.equal(values.budget, 30);
  assert.equal(values.cache, 'off');
  assert.equal(values.quiet, true);
  assert.deepEqual(values.filter, ['c.js']);
  assert.equal(values.listen, 'x:1');
  assert.deepEqual(readFlags(specs, [], env).values.filter, ['a.js', 'b.js']);
  assert.equal(readFlags(specs, ['--no-quiet'], env).values.quiet, false);
});

test('bad values are usage errors naming their source', () => {
  assert.throws(() => readFlags(specs, ['--budget', '0'], {}), (e: unknown) => e instanceof UsageError && /--budget: must be at least 1/.test(e.message));
  assert.throws(() => readFlags(specs, ['--budget', '1.5'], {}), UsageError);
  assert.throws(() => readFlags(specs, [], { T_BUDGET: 'lots' }), (e: unknown) => e instanceof UsageError && /T_BUDGET/.test(e.message));
  assert.throws(() => readFlags(specs, ['--cache', 'maybe'], {}), UsageError);
  assert.throws(() => readFlags(specs, [], { T_QUIET: 'perhaps' }), UsageError);
  assert.throws(() => readFlags(specs, ['--nope'], {}), UsageError);
});

test('help lists every flag with its environment variable', () => {
  const text = formatHelp('thing', 'Does a thing.', specs);
  for (const [name, spec] of Object.entries(specs)) {
    assert.match(text, new RegExp(`--${name}\\b`));
    assert.match(text, new RegExp(spec.env));
  }
  assert.equal(readFlags(specs, ['--help'], {}).help, true);
});

const sectioned = {
  listen: { type: 'string', env: 'S_LISTEN', default: '127.0.0.1:1', section: 'listeners', key: 'http', help: 'listen address' },
  'cache-ttl-ms': { type: 'number', env: 'S_CACHE_TTL_MS', envAliases: ['OLD_TTL'], default: 5, section: 'cache', help: 'ttl' },
  'trust-domain': { type: 'string', env: 'S_TRUST', default: 'x', help: 'no section' },
  config: { type: 'string?', env: 'S_CONFIG', noFile: true, help: 'the file' },
} as const satisfies FlagSpecs;

test('a flag sits in the config file at its section and key (default: the name without the section, camelCased)', () => {
  assert.equal(fileKey('listen', sectioned.listen), 'listeners.http');
  assert.equal(fileKey('cache-ttl-ms', sectioned['cache-ttl-ms']), 'cache.ttlMs');
  assert.equal(fileKey('trust-domain', sectioned['trust-domain']), 'trustDomain');
  assert.equal(fileKey('config', sectioned.config), undefined);
  assert.equal(fileKey('extproc-message-timeout-ms', { type: 'number', env: 'E', default: 1, help: '', section: 'extProc' }), 'extProc.extprocMessageTimeoutMs');
  assert.equal(fileKey('ext-proc-timeout-ms', { type: 'number', env: 'E', default: 1, help: '', section: 'extProc' }), 'extProc.timeoutMs');
});

test('a former variable name is read when the new one is not set, with a warning naming the new one', () => {
  const old = readFlags(sectioned, [], { OLD_TTL: '7' });
  assert.equal(old.values['cache-ttl-ms'], 7);
  assert.equal(old.sources['cache-ttl-ms'], 'OLD_TTL');
  assert.deepEqual(old.warnings, ['environment variable OLD_TTL is deprecated: use S_CACHE_TTL_MS']);
  const both = readFlags(sectioned, [], { OLD_TTL: '7', S_CACHE_TTL_MS: '8' });
  assert.equal(both.values['cache-ttl-ms'], 8, 'the new name wins');
  assert.deepEqual(both.warnings, [], 'an old name that is not used is not warned about');
  assert.throws(() => readFlags(sectioned, [], { OLD_TTL: 'x' }), (e: unknown) => e instanceof UsageError && /^OLD_TTL: expected a number/.test(e.message));
});

test('the config file layer sits below argv and the environment, above the defaults', () => {
  const file = { values: { listen: 'file:1', 'cache-ttl-ms': 9 }, sources: { listen: 'config file f: listeners.http', 'cache-ttl-ms': 'config file f: cache.ttlMs' } };
  const r = readFlags(sectioned, ['--listen', 'argv:1'], { S_CACHE_TTL_MS: '' }, file);
  assert.equal(r.values.listen, 'argv:1');
  assert.equal(r.values['cache-ttl-ms'], 9, 'an empty variable does not hide the file');
  assert.equal(r.sources['cache-ttl-ms'], 'config file f: cache.ttlMs');
  assert.equal(r.sources['trust-domain'], 'default');
  assert.equal(readFlags(sectioned, [], { S_CACHE_TTL_MS: '3' }, file).values['cache-ttl-ms'], 3);
});

test('a flag set lists its flags under their sections in --help, with variable, former names and file key', () => {
  const set = defineFlagSet({ command: 'thing', summary: 'Does a thing.', sections: { listeners: 'Where.', cache: 'The cache.' }, flags: sectioned });
  const text = flagSetHelp(set);
  assert.match(text, /\nlisteners: Where\.\n {2}--listen VALUE {4}\[S_LISTEN; listeners\.http\]\n/);
  assert.match(text, /--cache-ttl-ms N {4}\[S_CACHE_TTL_MS \(formerly OLD_TTL\); cache\.ttlMs\]/);
  assert.match(text, /--config VALUE {4}\[S_CONFIG\]\n/);
  assert.ok(text.indexOf('listeners:') < text.indexOf('cache:'), 'sections in their declared order');
  assert.match(text, /--version/);
});

test('a flag set refuses undeclared sections and two flags at one file key', () => {
  assert.throws(() => defineFlagSet({ command: 't', summary: '', sections: {}, flags: { a: { type: 'string', env: 'A', default: '', section: 'nope', help: '' } } }), /undeclared section "nope"/);
  assert.throws(
    () =>
      defineFlagSet({
        command: 't',
        summary: '',
        sections: { s: '' },
        flags: { 's-a': { type: 'string', env: 'A', default: '', section: 's', key: 'x', help: '' }, b: { type: 'string', env: 'B', default: '', section: 's', key: 'x', help: '' } },
      }),
    /--b and --s-a both use the config file key "s\.x"/,
  );
});
