import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFlags, formatHelp, UsageError, type FlagSpecs } from './flags.js';

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
