import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compactJsonLog, formatLine, levelOf, levelValue } from './log-format.js';

const plain = { width: 14, raw: false, color: false };

test('pino lines become LEVEL msg key=value, without time, pid or component', () => {
  const line = JSON.stringify({ level: 30, time: 1, pid: 7, component: 'proxy', msg: 'ready', addresses: { ingress: '127.0.0.1:8080' } });
  assert.equal(formatLine('proxy', line, plain), 'proxy          | INFO  ready addresses={"ingress":"127.0.0.1:8080"}');
});

test('strings with spaces are quoted, errors show their stack', () => {
  const line = JSON.stringify({ level: 50, msg: 'failed', reason: 'no route', err: { type: 'Error', stack: 'Error: boom' } });
  assert.equal(compactJsonLog(line), 'ERROR failed reason="no route" err="Error: boom"');
});

test('non-JSON lines, JSON without a numeric level, and raw mode pass through unchanged', () => {
  assert.equal(formatLine('extproc', 'Usage: x', plain), 'extproc        | Usage: x');
  assert.equal(formatLine('extproc', '{"a":1}', plain), 'extproc        | {"a":1}');
  assert.equal(formatLine('extproc', '{not json', plain), 'extproc        | {not json');
  const line = JSON.stringify({ level: 30, msg: 'x' });
  assert.equal(formatLine('proxy', line, { ...plain, raw: true }), `proxy          | ${line}`);
});

test('colour wraps only the name column', () => {
  const out = formatLine('proxy', 'hello', { ...plain, color: true });
  assert.match(out, /^\u001b\[\d+mproxy +\|\u001b\[0m hello$/);
});

test('levels: names to pino values, and the level of a pino line', () => {
  assert.equal(levelValue('warn'), 40);
  assert.equal(levelValue(' Info '), 30);
  assert.equal(levelValue('silent'), Infinity);
  assert.equal(levelValue('loud'), undefined);
  assert.equal(levelOf('{"level":20,"time":1,"msg":"x"}'), 20);
  assert.equal(levelOf('{"msg":"x","level":20}'), undefined);
  assert.equal(levelOf('plain text'), undefined);
});

test('access-log lines (no level) are shown as ACCESS, their null fields left out', () => {
  const line = JSON.stringify({ msg: 'access', time: 't', pid: 1, requestId: 'r1', method: 'GET', status: 200, traceId: null, tls: null });
  assert.equal(compactJsonLog(line), 'ACCESS access requestId=r1 method=GET status=200');
  assert.equal(compactJsonLog(JSON.stringify({ msg: 'admin', method: 'DELETE', client: '127.0.0.1:5' })), 'ACCESS admin method=DELETE client=127.0.0.1:5');
  assert.equal(levelOf(line), undefined, 'no level: LOG_LEVEL never filters it');
});
