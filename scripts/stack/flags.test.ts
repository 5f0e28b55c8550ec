import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UsageError } from '../../lib/flags.js';
import { filterArgs, readStackFlags } from './flags.js';

const flagsOf = (argv: string[], env: NodeJS.ProcessEnv = {}) => {
  const read = readStackFlags(argv, env);
  assert.equal(read.help, false);
  return (read as Extract<typeof read, { help: false }>).flags;
};

test('mTLS is on unless --tls off or STACK_TLS=off; the flag wins over the variable; anything else is refused', () => {
  assert.equal(flagsOf([]).tls, 'on');
  assert.equal(flagsOf(['--tls', 'off']).tls, 'off');
  assert.equal(flagsOf(['--tls=off']).tls, 'off');
  assert.equal(flagsOf([], { STACK_TLS: 'OFF' }).tls, 'off');
  assert.equal(flagsOf(['--tls', 'on'], { STACK_TLS: 'off' }).tls, 'on');
  assert.throws(() => flagsOf(['--tls', 'maybe']), UsageError);
});

test('--filter is repeatable and replaces PROXY_FILTERS; unknown flags and missing values are refused', () => {
  assert.deepEqual(flagsOf([], { PROXY_FILTERS: 'a.js,b.js' }).filter, ['a.js', 'b.js']);
  assert.deepEqual(flagsOf(['--filter', 'c.js', '--filter', 'd.js'], { PROXY_FILTERS: 'a.js' }).filter, ['c.js', 'd.js']);
  assert.throws(() => readStackFlags(['--filters', 'a.js'], {}), UsageError);
  assert.throws(() => readStackFlags(['--filter'], {}), UsageError);
  assert.throws(() => readStackFlags(['start'], {}), UsageError);
  assert.equal(readStackFlags(['--help'], {}).help, true);
});

test('filter paths are resolved against where npm start was typed, file: URLs kept', () => {
  assert.deepEqual(filterArgs(['./f.js', '/abs/g.js', 'file:///h.js'], '/home/me/project'), ['--filter', '/home/me/project/f.js', '--filter', '/abs/g.js', '--filter', 'file:///h.js']);
});
