/**
 * The fuzz suite's strict readers, checked on hand-made bytes: a reader that accepted a malformed answer would hide
 * a finding, one that refused a valid answer would report one that is not there.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readAnswers } from './http1-answers.js';
import { statusOf } from './h2-answers.js';
import { RequestReader } from './http1-requests.js';
import type { Http1Request } from './arbitraries.js';
import { http1Wire } from './http1-wire.js';
import { forwardedProblems } from './forwarded-checks.js';

const b = (s: string): Buffer => Buffer.from(s, 'latin1');

test('HTTP/1.1 answers: each framing read to its end; interim answers, HEAD and 204 without a body; a tunnel ends the reading', () => {
  const two = readAnswers(b('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 201 Created\r\ntransfer-encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nx-t: 1\r\n\r\n'), ['POST', 'GET'], false);
  assert.equal(two.problem, undefined);
  assert.deepEqual(two.answers.map((a) => [a.status, a.bodyLength, a.interim]), [[200, 2, [100]], [201, 2, []]]);
  assert.deepEqual(two.answers[1]?.trailers, [['x-t', '1']]);
  const head = readAnswers(b('HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n'), ['HEAD', 'GET'], false);
  assert.deepEqual(head.answers.map((a) => a.status), [200, 204]);
  const tunnel = readAnswers(b('HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\n\r\n\x81\x00garbage'), ['GET'], false);
  assert.equal(tunnel.tunnel, true);
  assert.equal(tunnel.problem, undefined);
});

test('HTTP/1.1 answers: a close-delimited body only once closed; a cut one is partial; malformed ones and extra answers are problems', () => {
  assert.equal(readAnswers(b('HTTP/1.1 200 OK\r\n\r\nabc'), ['GET'], false).partial, true);
  assert.equal(readAnswers(b('HTTP/1.1 200 OK\r\n\r\nabc'), ['GET'], true).answers[0]?.bodyLength, 3);
  assert.equal(readAnswers(b('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nab'), ['GET'], true).partial, true);
  for (const bad of [
    'HTTP/1.1 200 OK\r\ncontent-length: 1\r\ntransfer-encoding: chunked\r\n\r\n',
    'HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n',
    'HTTP/1.1 600 OK\r\ncontent-length: 0\r\n\r\n',
    'HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n',
    'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n',
    'HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\nHTTP/1.1 400 Bad Request\r\n\r\n',
    'HTTP/2 200\r\n\r\n',
  ]) {
    assert.notEqual(readAnswers(b(bad), ['GET'], true).problem, undefined, JSON.stringify(bad));
  }
});

test("HTTP/2 :status from a header block's first field: static indexes, literals, Huffman-coded digits, after a table size update", () => {
  assert.equal(statusOf(Buffer.from([0x88])), 200);
  assert.equal(statusOf(Buffer.from([0x8d])), 404);
  assert.equal(statusOf(Buffer.from([0x20, 0x8c])), 400);
  assert.equal(statusOf(Buffer.concat([Buffer.from([0x48, 0x03]), b('421')])), 421);
  assert.equal(statusOf(Buffer.from([0x48, 0x82, 0x68, 0x41])), 421); // '4' 011010, '2' 00010, '1' 00001
  assert.equal(statusOf(Buffer.from([0x08, 0x82, 0x10, 0x01])), 200); // '2' 00010, '0' 00000, '0' 00000, padding 1
  assert.equal(statusOf(Buffer.concat([Buffer.from([0x40, 0x04]), b('x-tr'), Buffer.from([0x01]), b('1')])), undefined, 'trailers');
  assert.throws(() => statusOf(Buffer.concat([Buffer.from([0x48, 0x02]), b('42')])));
});

test('worker-side request reader: bodies by content-length and chunked, pipelined requests, malformed ones reported', () => {
  const r = new RequestReader();
  const got = r.push(b('POST /a HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\n\r\nabcGET /b HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n'));
  assert.deepEqual(got.map((q) => [q.method, q.url, q.body.toString()]), [['POST', '/a', 'abc'], ['GET', '/b', 'z']]);
  assert.equal(r.problem, undefined);
  const partial = new RequestReader();
  assert.deepEqual(partial.push(b('GET / HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\na')), []);
  assert.equal(partial.push(b('b')).length, 1);
  const bad = new RequestReader();
  bad.push(b('GET / HTTP/1.1\r\nx-a: a\x01b\r\n\r\n'));
  assert.notEqual(bad.problem, undefined);
});

test('HTTP/1.1 wire: a body longer than its content-length that holds a whole request counts that request as one more to answer', () => {
  const base: Http1Request = {
    method: 'PUT',
    target: '/',
    version: 'HTTP/1.1',
    head: { host: 'one', authority: 'a.example', second: '', fields: [], hop: [] },
    framing: { kind: 'long-body', body: 'ab', extra: 'GET / HTTP/1.1\r\n\r\n' },
    eol: '\r\n',
  };
  const smuggled = http1Wire(base, 'w1', false);
  assert.deepEqual(smuggled.methods, ['PUT', 'GET']);
  assert.equal(smuggled.completeness, 'ambiguous');
  // Its answers, the second one's body included, read without a problem; a third one is still a problem.
  const answers = Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\nHTTP/1.1 400 Bad Request\r\ncontent-length: 3\r\n\r\nno\n', 'latin1');
  assert.equal(readAnswers(answers, smuggled.methods, false).problem, undefined);
  const third = Buffer.concat([answers, Buffer.from('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n', 'latin1')]);
  assert.match(readAnswers(third, smuggled.methods, true).problem ?? '', /after the answer to every request/);
  // Extra bytes that are no whole request are not one.
  assert.deepEqual(http1Wire({ ...base, framing: { kind: 'long-body', body: '', extra: 'xyz' } }, 'w2', false).methods, ['PUT']);
  assert.deepEqual(http1Wire({ ...base, framing: { kind: 'long-body', body: '', extra: '\r\n' } }, 'w3', false).methods, ['PUT']);
  // An unreadable head (bare LF) is not read past: nothing after it counts.
  assert.deepEqual(http1Wire({ ...base, eol: '\n' }, 'w4', false).methods, ['PUT']);
});

test('forwarded heads: x-ate-target-port once, more only as ext_proc appended them, each of them its own', () => {
  const at = '127.0.0.1:8443';
  const head = (...ports: string[]): { at: string; rawHeaders: string[] } => ({ at, rawHeaders: ['Host', 'a.example', ...ports.flatMap((p) => ['x-ate-target-port', p])] });
  const rules = (appended: number): Parameters<typeof forwardedProblems>[1] => ({
    upstreams: new Set([at]),
    setByExtProc: new Map([['x-ate-target-port', ['set-by-extproc']]]),
    appendedByExtProc: new Map([['x-ate-target-port', appended]]),
  });
  const twice = /x-ate-target-port 2 times/;
  assert.deepEqual(forwardedProblems(head('80'), rules(0), '127.0.0.9:1'), []);
  assert.match(forwardedProblems(head('set-by-extproc', 'set-by-extproc'), rules(0), '127.0.0.9:1').join('; '), twice);
  assert.deepEqual(forwardedProblems(head('set-by-extproc', 'set-by-extproc'), rules(1), '127.0.0.9:1'), []);
  assert.match(forwardedProblems(head('set-by-extproc', '80'), rules(1), '127.0.0.9:1').join('; '), twice, 'one of them not ext_proc\'s');
  assert.match(forwardedProblems(head('set-by-extproc', 'set-by-extproc', 'set-by-extproc'), rules(1), '127.0.0.9:1').join('; '), /3 times/);
});
