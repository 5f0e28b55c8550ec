import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { classifyFirstBytes, FirstBytesReader, type FirstBytesAnswer } from './first-bytes.js';
import { clientHello, clientHelloMessage, inRecords } from './testing/client-hello.js';

/** `bytes` pushed in chunks cut at `cuts`; the answer after the last chunk. */
function readInChunks(bytes: Uint8Array, cuts: readonly number[], maxBytes: number): { answer: FirstBytesAnswer; reader: FirstBytesReader } {
  const reader = new FirstBytesReader(maxBytes);
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const to of [...at, bytes.length]) {
    reader.push(Buffer.from(bytes.subarray(from, to)));
    from = to;
  }
  return { answer: reader.answer, reader };
}

/** What the reader must answer for `bytes` whatever the chunks: the classification of the first `maxBytes` of them. */
function expected(bytes: Uint8Array, maxBytes: number): FirstBytesAnswer {
  const r = classifyFirstBytes(bytes.subarray(0, maxBytes));
  if (r.kind !== 'need-more') return r;
  return r.needed > maxBytes ? { kind: 'too-large' } : { kind: 'need-more' };
}

test('TLS, HTTP or neither, from the first byte', () => {
  assert.deepEqual(classifyFirstBytes(clientHello('a.example.com')), { kind: 'sni', name: 'a.example.com' });
  assert.deepEqual(classifyFirstBytes(clientHello(null)), { kind: 'no-sni' });
  assert.deepEqual(classifyFirstBytes(Buffer.from('GET / HTTP/1.1\r\nHost: a.b\r\n\r\n')), { kind: 'host', name: 'a.b' });
  assert.deepEqual(classifyFirstBytes(Buffer.from('SSH-2.0-x\r\n')), { kind: 'unknown-protocol' });
  assert.deepEqual(classifyFirstBytes(Buffer.from([22, 0, 0, 0, 0])), { kind: 'unknown-protocol' });
  assert.deepEqual(classifyFirstBytes(Buffer.from([22, 3, 1, 0, 0])), { kind: 'malformed', protocol: 'tls', detail: 'an empty handshake record' });
  assert.deepEqual(classifyFirstBytes(Buffer.from('GET / HTTP/1.1\r\n\r\n')), { kind: 'malformed', protocol: 'http', detail: 'no Host header' });
  assert.deepEqual(classifyFirstBytes(Buffer.alloc(0)), { kind: 'need-more', needed: 1 });
});

test('the reader: a ClientHello in 1-byte writes decides at its last byte; the bytes it kept are all that was pushed', () => {
  const hello = clientHello('split.example.com');
  const reader = new FirstBytesReader(16384);
  for (let i = 0; i < hello.length; i++) {
    const answer = reader.push(hello.subarray(i, i + 1));
    assert.equal(answer.kind, i === hello.length - 1 ? 'sni' : 'need-more', `byte ${i}`);
  }
  assert.deepEqual(reader.answer, { kind: 'sni', name: 'split.example.com' });
  assert.deepEqual(reader.bytes(), hello);
  assert.deepEqual(reader.push(Buffer.from('more')), { kind: 'sni', name: 'split.example.com' }, 'an answer does not change');
  assert.deepEqual(reader.bytes(), Buffer.concat([hello, Buffer.from('more')]));
});

test('the limit: a ClientHello larger than it is too-large (as soon as its length says so); one that fits is read', () => {
  const big = inRecords(clientHelloMessage({ sni: 'big.example.com', after: [{ type: 21, data: new Uint8Array(3000) }] }));
  assert.deepEqual(readInChunks(big, [], 20000).answer, { kind: 'sni', name: 'big.example.com' });
  assert.deepEqual(readInChunks(big, [], 2000).answer, { kind: 'too-large' });
  const first = new FirstBytesReader(2000);
  assert.deepEqual(first.push(big.subarray(0, 5)), { kind: 'too-large' }, 'the record header already claims more than the limit');
  const many = inRecords(clientHelloMessage({ sni: 'big.example.com', after: [{ type: 21, data: new Uint8Array(3000) }] }), [100]);
  assert.deepEqual(readInChunks(many, [50, 700, 1999], 2000).answer, { kind: 'too-large' });
  const head = Buffer.from(`GET / HTTP/1.1\r\nX: ${'a'.repeat(3000)}\r\nHost: a.b\r\n\r\n`);
  assert.deepEqual(readInChunks(head, [10, 100], 2000).answer, { kind: 'too-large' });
  assert.deepEqual(readInChunks(head, [10, 100], 4000).answer, { kind: 'host', name: 'a.b' });
});

test('fuzz: whatever the bytes and however they are split, the reader answers what the first maxBytes of them decide', () => {
  const hello = fc.tuple(fc.domain(), fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 5 })).map(([name, sizes]) => inRecords(clientHelloMessage({ sni: name }), sizes));
  const mutate = (base: fc.Arbitrary<Buffer>) =>
    fc.tuple(base, fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 3 }), fc.option(fc.nat())).map(([b, flips, cut]) => {
      const out = Buffer.from(b);
      for (const [at, v] of flips) out[at % out.length] = v;
      return cut === null ? out : out.subarray(0, cut % (out.length + 1));
    });
  const http = fc.domain().map((d) => Buffer.from(`GET / HTTP/1.1\r\nHost: ${d}\r\nAccept: */*\r\n\r\n`));
  const bytes = fc.oneof(mutate(hello), mutate(http), fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)));
  fc.assert(
    fc.property(bytes, fc.array(fc.nat(), { maxLength: 40 }), fc.integer({ min: 1, max: 600 }), (b, cuts, maxBytes) => {
      const { answer, reader } = readInChunks(b, cuts, maxBytes);
      assert.deepEqual(answer, expected(b, maxBytes));
      assert.deepEqual(reader.bytes(), b);
    }),
    { seed: 4431, numRuns: 500 },
  );
});
