import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { componentStart } from './component-start.js';

function sink(): { out: Writable; text: () => string } {
  let text = '';
  const out = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  return { out, text: () => text };
}

test('componentStart: --help prints the help and there is nothing to start', () => {
  const s = sink();
  const start = componentStart('extproc', { kind: 'help' }, () => 'Usage: actor-edge extproc\n', s.out);
  assert.equal(start, undefined);
  assert.equal(s.text(), 'Usage: actor-edge extproc\n');
});

test('componentStart: a config read gives the config and a logger of that component; nothing is printed', () => {
  const s = sink();
  const config = Object.freeze({ listen: '127.0.0.1:0' });
  const start = componentStart('worker', { kind: 'config', config, warnings: [], file: undefined, fields: {}, sources: {} }, () => 'help', s.out);
  assert.ok(start !== undefined);
  assert.equal(start.config, config);
  assert.equal(start.log.bindings()['component'], 'worker');
  assert.equal(s.text(), '');
});
