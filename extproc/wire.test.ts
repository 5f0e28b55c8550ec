import { test } from 'node:test';
import assert from 'node:assert/strict';
import { externalProcessorService } from './protocol.js';
import { summariseProcessingRequest, WireError } from './wire.js';

const encode = (message: Record<string, unknown>): Buffer => externalProcessorService().service.Process!.requestSerialize(message);
const raw = (key: string, value: string) => ({ key, raw_value: Buffer.from(value, 'utf8') });
const headers = (...list: Record<string, unknown>[]) => ({ request_headers: { headers: { headers: list }, end_of_stream: true } });

test('reads :authority from raw_value, with everything Envoy sends around it', () => {
  const message = {
    ...headers(raw(':path', '/x'), raw(':authority', 'counter-7.team-a.example:8080'), raw(':method', 'GET'), raw('host', 'other')),
    metadata_context: { filter_metadata: { ns: { fields: { a: { stringValue: 'b' } } } } },
    attributes: { 'envoy.filters.http.ext_proc': { fields: { x: { numberValue: 1 } } } },
    protocol_config: { request_body_mode: 'BUFFERED', response_body_mode: 'STREAMED', send_body_without_waiting_for_header_response: true },
    observability_mode: false,
  };
  assert.deepEqual(summariseProcessingRequest(encode(message)), { request: 'request_headers', authority: 'counter-7.team-a.example:8080', attributes: undefined });
});

test('host (any case) when :authority is absent; :authority wins wherever it appears', () => {
  assert.equal(summariseProcessingRequest(encode(headers(raw('x-a', '1'), raw('Host', 'h.example')))).authority, 'h.example');
  assert.equal(summariseProcessingRequest(encode(headers(raw('host', 'h1'), raw('host', 'h2')))).authority, 'h1');
  assert.equal(summariseProcessingRequest(encode(headers(raw('host', 'h'), raw(':authority', 'a')))).authority, 'a');
  assert.equal(summariseProcessingRequest(encode(headers(raw('hosts', 'x'), raw('hos', 'y')))).authority, '');
});

test('value is the fallback when raw_value is empty; raw_value wins when both are set', () => {
  assert.equal(summariseProcessingRequest(encode(headers({ key: ':authority', value: 'legacy.example' }))).authority, 'legacy.example');
  assert.equal(summariseProcessingRequest(encode(headers({ key: ':authority', value: 'v', raw_value: Buffer.from('r') }))).authority, 'r');
});

test('UTF-8 values, many headers, empty header lists', () => {
  assert.equal(summariseProcessingRequest(encode(headers(raw(':authority', 'cöunter.x')))).authority, 'cöunter.x');
  const many = Array.from({ length: 200 }, (_, i) => raw(`x-h-${i}`, 'v'.repeat(i)));
  assert.equal(summariseProcessingRequest(encode(headers(...many, raw(':authority', 'late.example')))).authority, 'late.example');
  assert.deepEqual(summariseProcessingRequest(encode(headers())), { request: 'request_headers', authority: '', attributes: undefined });
  assert.deepEqual(summariseProcessingRequest(encode({ request_headers: {} })), { request: 'request_headers', authority: '', attributes: undefined });
});

test('every other request kind, and none', () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ response_headers: { headers: { headers: [raw(':status', '200'), raw(':authority', 'ignored')] } } }, 'response_headers'],
    [{ request_body: { body: Buffer.from('hello'), end_of_stream: true } }, 'request_body'],
    [{ response_body: { body: Buffer.alloc(70_000, 1) } }, 'response_body'],
    [{ request_trailers: { trailers: { headers: [raw('x', 'y')] } } }, 'request_trailers'],
    [{ response_trailers: { trailers: {} } }, 'response_trailers'],
  ];
  for (const [message, kind] of cases) assert.deepEqual(summariseProcessingRequest(encode(message)), { request: kind, authority: '', attributes: undefined });
  assert.deepEqual(summariseProcessingRequest(encode({ metadata_context: {} })), { request: undefined, authority: '', attributes: undefined });
  assert.deepEqual(summariseProcessingRequest(Buffer.alloc(0)), { request: undefined, authority: '', attributes: undefined });
});

test('unknown fields of every wire type are skipped', () => {
  const unknown = Buffer.from([
    (99 << 3) | 0, 0x96, 0x01, // varint
    (98 << 3) | 1, 1, 2, 3, 4, 5, 6, 7, 8, // fixed64
    (97 << 3) | 5, 1, 2, 3, 4, // fixed32
    (96 << 3) | 2, 2, 0xff, 0xfe, // bytes
  ].flatMap((b) => (b > 0xff ? [(b & 0x7f) | 0x80, b >> 7] : [b])));
  const buf = Buffer.concat([unknown, encode(headers(raw(':authority', 'a.example')))]);
  assert.deepEqual(summariseProcessingRequest(buf), { request: 'request_headers', authority: 'a.example', attributes: undefined });
});

test('truncated input is rejected', () => {
  const buf = encode(headers(raw(':authority', 'a.example')));
  for (const cut of [1, 3, buf.length - 1]) assert.throws(() => summariseProcessingRequest(buf.subarray(0, cut)), WireError);
  assert.throws(() => summariseProcessingRequest(Buffer.from([0x0b])), WireError); // group wire type
});
