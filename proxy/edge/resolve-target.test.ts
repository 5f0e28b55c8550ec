import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveRequestTarget } from './resolve-target.js';
import { sanitiseRequestHeaders } from './ingress-headers.js';
import { ERRORS } from '../http/errors.js';

const resolve = (url: string, raw: string[]) => resolveRequestTarget(url, sanitiseRequestHeaders(raw, '127.0.0.1', 'http', new Set()));
const hostOf = (headers: readonly string[]): string[] => headers.filter((_, i) => i % 2 === 1 && headers[i - 1] === 'host');

test('origin-form keeps the path and takes the authority from Host', () => {
  const t = resolve('/a/b?c=1', ['Host', 'a.example:8080']);
  assert.equal(t.kind, 'forward');
  assert.equal(t.path, '/a/b?c=1');
  assert.equal(t.authority, 'a.example:8080');
  assert.deepEqual(hostOf(t.headers), ['a.example:8080']);
});

test('absolute-form http: the target authority replaces Host and the path becomes origin-form', () => {
  const t = resolve('HTTP://b.example:81/x?y=1', ['Host', 'a.example']);
  assert.equal(t.kind, 'forward');
  assert.equal(t.authority, 'b.example:81');
  assert.equal(t.path, '/x?y=1');
  assert.deepEqual(hostOf(t.headers), ['b.example:81']);
  assert.equal(resolve('http://b.example', ['Host', 'a.example']).path, '/');
  assert.equal(resolve('http://b.example?q', ['Host', 'a.example']).path, '/?q');
  const noHost = resolve('http://[::1]:8/', []);
  assert.equal(noHost.kind, 'forward');
  assert.deepEqual(hostOf(noHost.headers), ['[::1]:8'], 'Host is added when the client sent none');
});

test('targets the proxy does not forward are refused with catalog errors', () => {
  const cases: [string, string[], typeof ERRORS[keyof typeof ERRORS]][] = [
    ['*', ['Host', 'a'], ERRORS.PATH_NOT_ABSOLUTE],
    ['', ['Host', 'a'], ERRORS.PATH_NOT_ABSOLUTE],
    ['a.example:443', ['Host', 'a'], ERRORS.INVALID_TARGET], // parses as scheme "a.example"
    ['foo://x/', ['Host', 'a'], ERRORS.INVALID_TARGET],
    ['ftp://a/', ['Host', 'a'], ERRORS.INVALID_TARGET],
    ['https://a/', ['Host', 'a'], ERRORS.INVALID_TARGET],
    ['urn:x', ['Host', 'a'], ERRORS.INVALID_TARGET],
    ['http:///x', ['Host', 'a'], ERRORS.INVALID_TARGET],
    ['http://user:secret@a/', ['Host', 'a'], ERRORS.INVALID_TARGET],
    ['/', ['Host', 'user@a'], ERRORS.INVALID_AUTHORITY],
    ['/', ['Host', 'a b'], ERRORS.INVALID_AUTHORITY],
    ['http://b/', ['Host', 'u@a'], ERRORS.INVALID_AUTHORITY],
    ['/', [], ERRORS.NO_HOST],
    ['/', ['Host', ''], ERRORS.NO_HOST],
    ['http://b/', ['Host', 'a', 'Host', 'b'], ERRORS.DUPLICATE_HOST],
  ];
  for (const [url, raw, error] of cases) {
    const t = resolve(url, raw);
    assert.equal(t.kind, 'refuse', `${url} ${raw.join(' ')}`);
    if (t.kind === 'refuse') assert.equal(t.error, error, `${url} ${raw.join(' ')}: ${t.details}`);
    assert.equal(t.path, url, 'a refused target is logged as received');
  }
});
