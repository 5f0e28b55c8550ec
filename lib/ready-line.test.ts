import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { readyAddresses, splitLines } from './ready-line.js';

test('splitLines joins chunks into lines and flushes the last one at the end', async () => {
  const s = new PassThrough();
  const lines: string[] = [];
  splitLines(s, (l) => lines.push(l));
  s.write('a\nb');
  s.write('c\n\nd');
  s.end();
  await new Promise((r) => s.on('end', r));
  assert.deepEqual(lines, ['a', 'bc', '', 'd']);
});

test('readyAddresses reads only the ready line, keeping string addresses', () => {
  assert.deepEqual(readyAddresses('{"level":30,"addresses":{"grpc":"127.0.0.1:1","n":2},"msg":"ready"}'), { grpc: '127.0.0.1:1' });
  assert.equal(readyAddresses('{"msg":"ready"}'), undefined);
  assert.equal(readyAddresses('{"msg":"not ready","addresses":{}}'), undefined);
  assert.equal(readyAddresses('ready'), undefined);
  assert.equal(readyAddresses('{"msg":"ready", broken'), undefined);
});
