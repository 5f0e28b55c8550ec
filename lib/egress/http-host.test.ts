import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { hostOfAuthority, parseHttpHost, type HttpHostResult } from './http-host.js';

const kinds = new Set(['host', 'need-more', 'not-http', 'malformed']);

/** As for the ClientHello: every prefix keeps the contract, and the first answer that is not need-more is the whole's. */
function checkPrefixes(text: string | Uint8Array): HttpHostResult {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'latin1') : text;
  const whole = parseHttpHost(bytes);
  let needed = 0;
  for (let n = 0; n <= bytes.length; n++) {
    const r = parseHttpHost(bytes.subarray(0, n));
    assert.ok(kinds.has(r.kind));
    if (n < needed) {
      assert.equal(r.kind, 'need-more');
      continue;
    }
    if (r.kind !== 'need-more') {
      assert.deepEqual(r, whole, `prefix ${n}`);
      return whole;
    }
    assert.ok(r.needed > n);
    needed = r.needed;
  }
  return whole;
}

test('the Host of the first request head, its port stripped; everything else refused with a reason', () => {
  const table: [string, HttpHostResult][] = [
    ['GET / HTTP/1.1\r\nHost: api.example.com\r\n\r\n', { kind: 'host', name: 'api.example.com' }],
    ['GET / HTTP/1.1\r\nhost:API.Example.com:8080 \r\nAccept: */*\r\n\r\nbody', { kind: 'host', name: 'API.Example.com' }],
    ['POST /x HTTP/1.0\r\nHost: a.b:\r\n\r\n', { kind: 'host', name: 'a.b' }],
    ['GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n', { kind: 'host', name: '[::1]' }],
    ['GET http://a.b:80/x HTTP/1.1\r\nHost: A.B\r\n\r\n', { kind: 'host', name: 'A.B' }],
    ['CONNECT a.b:443 HTTP/1.1\r\nHost: a.b:443\r\n\r\n', { kind: 'host', name: 'a.b' }],
    ['GET / HTTP/1.1\r\nHost: a.b\r\n', { kind: 'need-more', needed: 28 }],
    ['GET', { kind: 'need-more', needed: 4 }],
    ['SSH-2.0-OpenSSH_9.6\r\n', { kind: 'not-http' }],
    [' GET / HTTP/1.1\r\n', { kind: 'not-http' }],
    ['\u0000\u0001', { kind: 'not-http' }],
    ['ABCDEFGHIJKLMNOPQ', { kind: 'not-http' }],
    ['GET / HTTP/2.0\r\n', { kind: 'malformed', detail: 'a version other than HTTP/1.1 or HTTP/1.0' }],
    ['GET  / HTTP/1.1\r\n', { kind: 'malformed', detail: 'a request line that is not method, target and version' }],
    ['GET / HTTP/1.1\r\n\r\n', { kind: 'malformed', detail: 'no Host header' }],
    ['GET / HTTP/1.1\r\nHost: a.b\r\nHost: c.d\r\n\r\n', { kind: 'malformed', detail: 'two Host headers' }],
    ['GET / HTTP/1.1\r\nHost : a.b\r\n\r\n', { kind: 'malformed', detail: 'a header line that is not name: value' }],
    ['GET / HTTP/1.1\r\nX: y\r\n z\r\nHost: a.b\r\n\r\n', { kind: 'malformed', detail: 'a folded header line' }],
    ['GET / HTTP/1.1\r\nHost: a.b\u0001\r\n\r\n', { kind: 'malformed', detail: 'a control character in a header value' }],
    ['GET / HTTP/1.1\r\nHost: a.b\nX: y\r\n\r\n', { kind: 'malformed', detail: 'a control character in a header value' }],
    ['GET / HTTP/1.1\r\nHost: a@b\r\n\r\n', { kind: 'malformed', detail: 'a Host that is not host[:port]' }],
    ['GET / HTTP/1.1\r\nHost: a.b:x\r\n\r\n', { kind: 'malformed', detail: 'a Host that is not host[:port]' }],
    ['GET / HTTP/1.1\r\nHost: \r\n\r\n', { kind: 'malformed', detail: 'a Host that is not host[:port]' }],
    ['GET http://evil.test/ HTTP/1.1\r\nHost: a.b\r\n\r\n', { kind: 'malformed', detail: 'a request target naming another host than Host' }],
    ['CONNECT evil.test:443 HTTP/1.1\r\nHost: a.b:443\r\n\r\n', { kind: 'malformed', detail: 'a request target naming another host than Host' }],
  ];
  for (const [text, expected] of table) assert.deepEqual(checkPrefixes(text), expected, JSON.stringify(text));
});

test('hostOfAuthority: a name or an IP literal, without its port', () => {
  assert.equal(hostOfAuthority('a.b:443'), 'a.b');
  assert.equal(hostOfAuthority('[fd00::1]'), '[fd00::1]');
  for (const bad of ['', ':80', '[::1', '[::1]x', 'a b', 'a:b:c', 'a.b:-1']) assert.equal(hostOfAuthority(bad), undefined, bad);
});

test('generated requests: the Host given, however long the head; random and mutated bytes keep the contract', () => {
  const header = fc.tuple(fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,15}$/), fc.stringMatching(/^[ -~]{0,30}$/)).filter(([n]) => n.toLowerCase() !== 'host');
  fc.assert(
    fc.property(fc.constantFrom('GET', 'POST', 'HEAD', 'OPTIONS'), fc.domain(), fc.option(fc.integer({ min: 1, max: 65535 })), fc.array(header, { maxLength: 5 }), fc.nat(6), (method, host, port, headers, at) => {
      const lines = headers.map(([n, v]) => `${n}: ${v.trim()}`);
      lines.splice(at % (lines.length + 1), 0, `Host: ${host}${port === null ? '' : `:${port}`}`);
      assert.deepEqual(checkPrefixes(`${method} /p?q=1 HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`), { kind: 'host', name: host });
    }),
    { seed: 4411, numRuns: 200 },
  );
  const request = 'GET / HTTP/1.1\r\nHost: a.example.com\r\nUser-Agent: t\r\n\r\n';
  const mutated = fc.tuple(fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }), fc.nat()).map(([flips, cut]) => {
    const bytes = Buffer.from(request, 'latin1');
    for (const [at, v] of flips) bytes[at % bytes.length] = v;
    return bytes.subarray(0, cut % (bytes.length + 1));
  });
  fc.assert(fc.property(fc.oneof(mutated, fc.uint8Array({ maxLength: 80 })), (bytes) => void checkPrefixes(bytes)), { seed: 4412, numRuns: 400 });
});
