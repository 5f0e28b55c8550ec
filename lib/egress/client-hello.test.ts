import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseClientHello, type ClientHelloResult } from './client-hello.js';
import { clientHello, clientHelloMessage, inRecords, nodeClientHello, serverNameData } from './testing/client-hello.js';

const kinds = new Set(['sni', 'no-sni', 'need-more', 'not-tls', 'malformed']);

/**
 * The parser's contract on `bytes` and every prefix of it: never a throw; an answer other than need-more is the
 * answer for all of `bytes`; need-more(k) asks for more than it has, and every prefix shorter than k is need-more too.
 */
function checkPrefixes(bytes: Uint8Array): ClientHelloResult {
  const whole = parseClientHello(bytes);
  let needed = 0;
  for (let n = 0; n <= bytes.length; n++) {
    const r = parseClientHello(bytes.subarray(0, n));
    assert.ok(kinds.has(r.kind), r.kind);
    if (n < needed) {
      assert.equal(r.kind, 'need-more', `prefix ${n} below needed ${needed}`);
      continue;
    }
    if (r.kind === 'need-more') {
      assert.ok(r.needed > n, `needed ${r.needed} at ${n}`);
      needed = r.needed;
    } else {
      assert.deepEqual(r, whole, `prefix ${n} decides as the whole`);
      return whole;
    }
  }
  return whole;
}

test("node's own ClientHello: its SNI; to an IP address it sends none", async () => {
  assert.deepEqual(parseClientHello(await nodeClientHello({ servername: 'api.example.com' })), { kind: 'sni', name: 'api.example.com' });
  assert.deepEqual(parseClientHello(await nodeClientHello({ servername: 'API.Example.COM', minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' })), { kind: 'sni', name: 'API.Example.COM' });
  assert.deepEqual(parseClientHello(await nodeClientHello({})), { kind: 'no-sni' });
});

test('built ClientHellos: each field checked', () => {
  const table: [string, Uint8Array, ClientHelloResult][] = [
    ['sni', clientHello('a.example.com'), { kind: 'sni', name: 'a.example.com' }],
    ['sni after other extensions', clientHello('x.test', { before: [{ type: 10, data: new Uint8Array([0, 2, 0, 29]) }] }), { kind: 'sni', name: 'x.test' }],
    ['no server_name', clientHello(null), { kind: 'no-sni' }],
    ['no extensions at all', inRecords(clientHelloMessage({ noExtensions: true })), { kind: 'no-sni' }],
    ['empty session id', clientHello('a.b', { sessionId: new Uint8Array(0) }), { kind: 'sni', name: 'a.b' }],
    ['split in 1-byte records', inRecords(clientHelloMessage({ sni: 'a.b' }), [1]), { kind: 'sni', name: 'a.b' }],
    ['record version 3.3', inRecords(clientHelloMessage({ sni: 'a.b' }), [16384], [3, 3]), { kind: 'sni', name: 'a.b' }],
    ['empty', new Uint8Array(0), { kind: 'need-more', needed: 1 }],
    ['a record header only', Buffer.from([22, 3, 1, 0, 50]), { kind: 'need-more', needed: 55 }],
    ['HTTP', Buffer.from('GET / HTTP/1.1\r\n'), { kind: 'not-tls' }],
    ['SSLv2-style hello', Buffer.from([0x80, 0x2e, 1, 3, 1]), { kind: 'not-tls' }],
    ['22 then no TLS version', Buffer.from([22, 9, 9, 0, 1, 1]), { kind: 'not-tls' }],
    ['a zero-length record', Buffer.from([22, 3, 1, 0, 0]), { kind: 'malformed', detail: 'an empty handshake record' }],
    ['a record over 2^14', Buffer.from([22, 3, 1, 0x40, 0x01]), { kind: 'malformed', detail: 'a record longer than 16384 bytes' }],
    ['a ServerHello', inRecords(Buffer.from([2, 0, 0, 1, 0])), { kind: 'malformed', detail: 'a handshake message of type 2, not a ClientHello' }],
    ['an alert before the end', Buffer.concat([inRecords(clientHelloMessage({ sni: 'a.b' }).subarray(0, 10)), Buffer.from([21, 3, 1, 0, 2, 2, 40])]), { kind: 'malformed', detail: 'a record of type 21 before the ClientHello ended' }],
    ['a later record with another version', Buffer.concat([inRecords(clientHelloMessage({ sni: 'a.b' }).subarray(0, 10)), Buffer.from([22, 2, 0, 0, 1, 0])]), { kind: 'malformed', detail: 'a record version other than TLS 1.0 to 1.2' }],
    ['session id of 33', clientHello('a.b', { sessionId: new Uint8Array(33) }), { kind: 'malformed', detail: 'a bad session id' }],
    ['odd cipher suites', inRecords(patch(clientHelloMessage({ sni: 'a.b', sessionId: new Uint8Array(0) }), 4 + 2 + 32 + 1, [0, 5])), { kind: 'malformed', detail: 'bad cipher suites' }],
    ['hello version SSL 3.0', clientHello('a.b', { version: [3, 0] }), { kind: 'malformed', detail: 'a ClientHello version other than TLS 1.0 to 1.2' }],
    ['two server_name extensions', clientHello('a.b', { after: [{ type: 0, data: new Uint8Array(serverNameData([{ type: 0, name: 'c.d' }])) }] }), { kind: 'malformed', detail: 'extension 0 twice' }],
    ['two host_names', clientHello(null, { serverNames: [{ type: 0, name: 'a.b' }, { type: 0, name: 'c.d' }] }), { kind: 'malformed', detail: 'two host_names' }],
    ['a name type 1', clientHello(null, { serverNames: [{ type: 1, name: 'a.b' }] }), { kind: 'malformed', detail: 'a server_name of type 1' }],
    ['an empty host_name', clientHello(null, { serverNames: [{ type: 0, name: '' }] }), { kind: 'malformed', detail: 'a host_name that is not printable ASCII' }],
    ['a host_name with a space', clientHello('a b'), { kind: 'malformed', detail: 'a host_name that is not printable ASCII' }],
    ['a host_name with a NUL', clientHello('a.b\u0000.evil'), { kind: 'malformed', detail: 'a host_name that is not printable ASCII' }],
    ['an empty server_name list', clientHello(null, { serverNames: [] }), { kind: 'malformed', detail: 'a server_name list that does not fill its extension' }],
  ];
  for (const [what, bytes, expected] of table) assert.deepEqual(checkPrefixes(bytes), expected, what);
});

test('lengths that do not add up are malformed, never read past', () => {
  const message = clientHelloMessage({ sni: 'a.example.com' });
  // The handshake length one short: the extensions no longer fill the message.
  const short = Buffer.from(message);
  short.writeUIntBE(message.length - 4 - 1, 1, 3);
  assert.equal(parseClientHello(inRecords(short.subarray(0, short.length - 1))).kind, 'malformed');
  // The extensions length one long.
  const extensionsAt = 4 + 2 + 32 + 1 + 32 + 2 + 6 + 2;
  const long = Buffer.from(message);
  long.writeUInt16BE(long.readUInt16BE(extensionsAt) + 1, extensionsAt);
  assert.deepEqual(parseClientHello(inRecords(long)), { kind: 'malformed', detail: 'extensions that do not fill the ClientHello' });
  // A handshake message that claims more than its records hold waits for more, as many bytes as the claim.
  const claims = Buffer.from(message);
  claims.writeUIntBE(100_000, 1, 3);
  const r = parseClientHello(inRecords(claims));
  assert.equal(r.kind, 'need-more');
});

function patch(bytes: Buffer, at: number, values: number[]): Buffer {
  const out = Buffer.from(bytes);
  values.forEach((v, i) => (out[at + i] = v));
  return out;
}

const hostname = fc.domain();
const fragmentSizes = fc.array(fc.integer({ min: 1, max: 400 }), { minLength: 1, maxLength: 8 });

test('generated ClientHellos: the SNI, however the message is cut into records', () => {
  fc.assert(
    fc.property(hostname, fragmentSizes, fc.uint8Array({ maxLength: 32 }), (name, sizes, sessionId) => {
      const bytes = inRecords(clientHelloMessage({ sni: name, sessionId }), sizes);
      assert.deepEqual(checkPrefixes(bytes), { kind: 'sni', name });
    }),
    { seed: 4401, numRuns: 200 },
  );
});

test('fuzz: random bytes and mutated ClientHellos never throw, and every prefix keeps the contract', () => {
  const tlsLike = fc.tuple(fc.constantFrom(22, 22, 22, 21, 0x47), fc.uint8Array({ maxLength: 300 })).map(([first, rest]) => Buffer.from([first, 3, 1, ...rest]));
  fc.assert(fc.property(fc.oneof(fc.uint8Array({ maxLength: 300 }), tlsLike), (bytes) => void checkPrefixes(bytes)), { seed: 4402, numRuns: 400 });
  const mutated = fc
    .tuple(hostname, fragmentSizes, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }), fc.option(fc.nat()), fc.option(fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 8 }))))
    .map(([name, sizes, flips, cut, insert]) => {
      let bytes = inRecords(clientHelloMessage({ sni: name }), sizes);
      for (const [at, value] of flips) bytes[at % bytes.length] = value;
      if (insert !== null) bytes = Buffer.concat([bytes.subarray(0, insert[0] % bytes.length), insert[1], bytes.subarray(insert[0] % bytes.length)]);
      return cut === null ? bytes : bytes.subarray(0, cut % (bytes.length + 1));
    });
  fc.assert(fc.property(mutated, (bytes) => void checkPrefixes(bytes)), { seed: 4403, numRuns: 400 });
});
