import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sanitiseRequestHeaders } from './ingress-headers.js';
import { INTERNAL_HEADERS } from '../config.js';
import { FORGEABLE_HEADERS } from '../testing/forgeable-headers.js';

const STRIP = new Set([...INTERNAL_HEADERS, 'x-custom-internal']);

test('the internal-header list names every forgeable routing header', () => {
  for (const h of FORGEABLE_HEADERS) assert.ok(INTERNAL_HEADERS.includes(h), `${h} is missing from the internal-header list`);
});

function pairs(list: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < list.length; i += 2) out.push([list[i] as string, list[i + 1] as string]);
  return out;
}

test('hop-by-hop headers and the headers Connection names are removed; names come out lower case', () => {
  const raw = [
    'Host', 'a.demo.example',
    'Connection', 'keep-alive, X-Hop',
    'Keep-Alive', 'timeout=5',
    'Proxy-Connection', 'keep-alive',
    'TE', 'trailers',
    'Transfer-Encoding', 'chunked',
    'Upgrade', 'websocket',
    'Trailer', 'x-t',
    'Expect', '100-continue',
    'X-Hop', 'gone',
    'X-Keep', 'kept',
  ];
  const head = sanitiseRequestHeaders(raw, '10.0.0.9', 'http', STRIP);
  const names = pairs(head.headers).map(([n]) => n);
  for (const gone of ['connection', 'keep-alive', 'proxy-connection', 'te', 'transfer-encoding', 'upgrade', 'trailer', 'expect', 'x-hop']) {
    assert.ok(!names.includes(gone), gone);
  }
  assert.ok(names.includes('x-keep'));
  assert.equal(head.host, 'a.demo.example');
  assert.equal(head.hasBody, true, 'transfer-encoding announces a body');
});

test('a Connection header cannot remove the headers the proxy relies on', () => {
  const head = sanitiseRequestHeaders(['Host', 'h', 'Connection', 'host, content-length, x-request-id', 'Content-Length', '3', 'X-Request-Id', 'abc'], '1.1.1.1', 'http', STRIP, 0, true);
  const m = new Map(pairs(head.headers));
  assert.equal(m.get('host'), 'h');
  assert.equal(m.get('content-length'), '3');
  assert.equal(m.get('x-request-id'), 'abc');
});

test('forgeable internal headers and --strip-headers are removed whatever their case', () => {
  const raw = ['Host', 'h'];
  for (const h of [...FORGEABLE_HEADERS, 'x-custom-internal']) raw.push(h.toUpperCase(), 'forged');
  const head = sanitiseRequestHeaders(raw, '1.1.1.1', 'http', STRIP);
  assert.deepEqual(
    pairs(head.headers).map(([n]) => n).sort(),
    ['host', 'x-forwarded-for', 'x-forwarded-proto', 'x-request-id'],
  );
});

test('x-forwarded-for is appended, x-forwarded-proto set from the connection, a trusted x-request-id kept, a missing one generated', () => {
  const a = sanitiseRequestHeaders(
    ['Host', 'h', 'X-Forwarded-For', '1.2.3.4', 'x-forwarded-for', '5.6.7.8', 'X-Forwarded-Proto', 'https', 'X-Request-Id', 'client-id-1'],
    '127.0.0.1',
    'http',
    STRIP,
    0,
    true,
  );
  const m = new Map(pairs(a.headers));
  assert.equal(m.get('x-forwarded-for'), '1.2.3.4, 5.6.7.8, 127.0.0.1');
  assert.equal(m.get('x-forwarded-proto'), 'http');
  assert.equal(pairs(a.headers).filter(([n]) => n === 'x-forwarded-proto').length, 1);
  assert.equal(m.get('x-request-id'), 'client-id-1');
  assert.equal(a.requestId, 'client-id-1');

  const b = sanitiseRequestHeaders(['Host', 'h'], '::1', 'http', STRIP);
  const mb = new Map(pairs(b.headers));
  assert.equal(mb.get('x-forwarded-for'), '::1');
  assert.match(b.requestId, /^[0-9a-f-]{36}$/);
  assert.equal(mb.get('x-request-id'), b.requestId);
  assert.equal(b.hasBody, false);
});

test('an untrusted peer\'s x-request-id is replaced by the proxy\'s own, every copy of it', () => {
  const head = sanitiseRequestHeaders(['Host', 'h', 'X-Request-Id', 'forged-1', 'x-request-id', 'forged-2'], '1.1.1.1', 'http', STRIP);
  assert.match(head.requestId, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.deepEqual(pairs(head.headers).filter(([n]) => n === 'x-request-id'), [['x-request-id', head.requestId]]);
  const trusted = sanitiseRequestHeaders(['Host', 'h', 'X-Request-Id', 'from-the-lb', 'x-request-id', 'second'], '1.1.1.1', 'http', STRIP, 1, true);
  assert.equal(trusted.requestId, 'from-the-lb');
  assert.deepEqual(pairs(trusted.headers).filter(([n]) => n === 'x-request-id'), [['x-request-id', 'from-the-lb']]);
});

test('an unusable client x-request-id is replaced even when trusted; a duplicate or missing Host is reported', () => {
  const bad = sanitiseRequestHeaders(['Host', 'h', 'X-Request-Id', 'has space'], '1.1.1.1', 'http', STRIP, 0, true);
  assert.notEqual(bad.requestId, 'has space');
  assert.equal(pairs(bad.headers).filter(([n]) => n === 'x-request-id').length, 1);
  assert.equal(sanitiseRequestHeaders(['Host', 'a', 'host', 'b'], '1.1.1.1', 'http', STRIP).duplicateHost, true);
  assert.equal(sanitiseRequestHeaders(['X', 'y'], '1.1.1.1', 'http', STRIP).host, undefined);
  assert.equal(sanitiseRequestHeaders(['Host', 'h', 'Content-Length', '0'], '1.1.1.1', 'http', STRIP).hasBody, false);
  assert.equal(sanitiseRequestHeaders(['Host', 'h', 'Content-Length', '12'], '1.1.1.1', 'http', STRIP).hasBody, true);
});

test('hop-by-hop headers go without a Connection header too, and do not announce a body (only Transfer-Encoding does)', () => {
  const head = sanitiseRequestHeaders(['Host', 'h', 'Keep-Alive', 'timeout=5', 'TE', 'x-keep', 'Upgrade', 'h2c', 'X-Keep', 'kept'], '1.1.1.1', 'http', STRIP);
  assert.deepEqual(pairs(head.headers).map(([n]) => n), ['host', 'x-keep', 'x-request-id', 'x-forwarded-for', 'x-forwarded-proto']);
  assert.equal(head.hasBody, false);
  assert.equal(head.duplicateHost, false);
  assert.equal(sanitiseRequestHeaders(['Host', 'h', 'Transfer-Encoding', 'chunked'], '1.1.1.1', 'http', STRIP).hasBody, true);
});

test('several Connection headers all count; every header they name goes, even repeated; "close" is an option, not a name', () => {
  const head = sanitiseRequestHeaders(
    ['Host', 'h', 'Connection', 'x-a', 'X-A', '1', 'x-a', '2', 'Connection', ' close , x-b', 'X-B', '3', 'Close', 'a header', 'X-C', '4'],
    '1.1.1.1',
    'http',
    STRIP,
  );
  assert.deepEqual(pairs(head.headers).map(([n]) => n), ['host', 'close', 'x-c', 'x-request-id', 'x-forwarded-for', 'x-forwarded-proto']);
});

test('a second x-request-id is dropped: one id per request, the first valid one', () => {
  const head = sanitiseRequestHeaders(['Host', 'h', 'X-Request-Id', 'first', 'X-Request-Id', 'second'], '1.1.1.1', 'http', STRIP, 0, true);
  assert.equal(head.requestId, 'first');
  assert.deepEqual(pairs(head.headers).filter(([n]) => n === 'x-request-id'), [['x-request-id', 'first']]);
});

test('with no trusted hop Forwarded, X-Forwarded-Host and X-Real-IP are removed and X-Forwarded-Proto is the connection\'s', () => {
  const raw = ['Host', 'h', 'Forwarded', 'for=1.2.3.4', 'X-Forwarded-Host', 'evil', 'X-Real-IP', '1.2.3.4', 'X-Forwarded-Proto', 'https'];
  const m = new Map(pairs(sanitiseRequestHeaders(raw, '127.0.0.1', 'http', STRIP).headers));
  assert.equal(m.has('forwarded'), false);
  assert.equal(m.has('x-forwarded-host'), false);
  assert.equal(m.has('x-real-ip'), false);
  assert.equal(m.get('x-forwarded-proto'), 'http');
});

test('behind trusted hops the forwarding headers pass, the first X-Forwarded-Proto is kept, and the peer is appended', () => {
  const raw = ['Host', 'h', 'Forwarded', 'for=1.2.3.4', 'X-Forwarded-Host', 'front', 'X-Real-IP', '1.2.3.4', 'X-Forwarded-Proto', 'https', 'X-Forwarded-Proto', 'http', 'X-Forwarded-For', '1.2.3.4'];
  const head = sanitiseRequestHeaders(raw, '10.0.0.2', 'http', STRIP, 1);
  const m = new Map(pairs(head.headers));
  assert.equal(m.get('forwarded'), 'for=1.2.3.4');
  assert.equal(m.get('x-forwarded-host'), 'front');
  assert.equal(m.get('x-real-ip'), '1.2.3.4');
  assert.equal(m.get('x-forwarded-proto'), 'https');
  assert.equal(pairs(head.headers).filter(([n]) => n === 'x-forwarded-proto').length, 1);
  assert.equal(m.get('x-forwarded-for'), '1.2.3.4, 10.0.0.2');
  const absent = new Map(pairs(sanitiseRequestHeaders(['Host', 'h'], '10.0.0.2', 'http', STRIP, 1).headers));
  assert.equal(absent.get('x-forwarded-proto'), 'http', 'set from the connection when the hop sent none');
});

test('the declared Content-Length: the first one when it is a plain number (what the body budget reserves)', () => {
  const length = (raw: string[]) => sanitiseRequestHeaders(raw, '127.0.0.1', 'http', new Set()).contentLength;
  assert.equal(length(['Content-Length', '1024']), 1024);
  assert.equal(length(['content-length', '7', 'content-length', '9']), 7);
  assert.equal(length(['Transfer-Encoding', 'chunked']), undefined);
  assert.equal(length(['content-length', '1e3']), undefined);
  assert.equal(length([]), undefined);
  assert.equal(sanitiseRequestHeaders(['content-length', '5'], '127.0.0.1', 'http', new Set(['content-length'])).contentLength, undefined, 'a stripped header declares nothing');
});
