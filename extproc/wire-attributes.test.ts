/**
 * The egress attributes (lib/egress/wire.ts) as the hand decoder reads them from a ProcessingRequest: encoded by the
 * loaded proto as any ext_proc client would, table cases, generated messages (the decoder must agree with what was
 * encoded) and generated garbage (it must throw nothing but WireError).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { DIRECTION_ATTRIBUTE, OUTBOUND_DIRECTION, SOURCE_CERTIFICATE_ATTRIBUTE } from '../lib/egress/wire.js';
import { externalProcessorService } from './protocol.js';
import { EXT_PROC_ATTRIBUTES_KEY, summariseProcessingRequest, WireError } from './wire.js';

const encode = (message: Record<string, unknown>): Buffer => externalProcessorService().service.Process!.requestSerialize(message);
const raw = (key: string, value: string) => ({ key, raw_value: Buffer.from(value, 'utf8') });
const connect = (authority: string) => ({ request_headers: { headers: { headers: [raw(':method', 'CONNECT'), raw(':authority', authority)] }, end_of_stream: true } });
const PEM = '-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n';

function withAttributes(fields: Record<string, unknown>, key = EXT_PROC_ATTRIBUTES_KEY, authority = '10.0.0.1:443'): Buffer {
  return encode({ ...connect(authority), attributes: { [key]: { fields } } });
}

test('the proxy\'s egress message: the direction and the certificate, with the authority', () => {
  const summary = summariseProcessingRequest(
    withAttributes({ [SOURCE_CERTIFICATE_ATTRIBUTE]: { stringValue: PEM }, [DIRECTION_ATTRIBUTE]: { numberValue: OUTBOUND_DIRECTION } }),
  );
  assert.deepEqual(summary, { request: 'request_headers', authority: '10.0.0.1:443', attributes: { direction: 2, certificate: PEM } });
});

test('table: absent, wrongly typed, other keys, other filters', () => {
  const cases: [Buffer, unknown][] = [
    [encode(connect('1.2.3.4:1')), undefined],
    [withAttributes({}), undefined],
    [withAttributes({ 'request.path': { stringValue: '/' } }), undefined],
    [withAttributes({ [DIRECTION_ATTRIBUTE]: { numberValue: 1 } }), { direction: 1, certificate: undefined }],
    [withAttributes({ [DIRECTION_ATTRIBUTE]: { numberValue: 0 } }), { direction: 0, certificate: undefined }],
    [withAttributes({ [DIRECTION_ATTRIBUTE]: { stringValue: '2' } }), undefined],
    [withAttributes({ [DIRECTION_ATTRIBUTE]: { boolValue: true }, [SOURCE_CERTIFICATE_ATTRIBUTE]: { stringValue: 'x' } }), { direction: undefined, certificate: 'x' }],
    [withAttributes({ [SOURCE_CERTIFICATE_ATTRIBUTE]: { numberValue: 3 } }), undefined],
    [withAttributes({ [SOURCE_CERTIFICATE_ATTRIBUTE]: { structValue: { fields: {} } } }), undefined],
    [withAttributes({ [SOURCE_CERTIFICATE_ATTRIBUTE]: { stringValue: '' } }), { direction: undefined, certificate: '' }],
    [withAttributes({ [DIRECTION_ATTRIBUTE]: { numberValue: 2 } }, 'envoy.filters.http.other'), undefined],
  ];
  for (const [buf, attributes] of cases) assert.deepEqual(summariseProcessingRequest(buf).attributes, attributes, buf.toString('hex'));
});

test('attributes on a message that is not request headers are not reported', () => {
  const buf = encode({ response_headers: { headers: { headers: [] } }, attributes: { [EXT_PROC_ATTRIBUTES_KEY]: { fields: { [DIRECTION_ATTRIBUTE]: { numberValue: 2 } } } } });
  assert.deepEqual(summariseProcessingRequest(buf), { request: 'response_headers', authority: '', attributes: undefined });
});

test('attributes before the headers, and a later map entry for the same key replacing the earlier one', () => {
  const first = encode({ attributes: { [EXT_PROC_ATTRIBUTES_KEY]: { fields: { [DIRECTION_ATTRIBUTE]: { numberValue: 2 }, [SOURCE_CERTIFICATE_ATTRIBUTE]: { stringValue: 'a' } } } } });
  const second = encode({ attributes: { [EXT_PROC_ATTRIBUTES_KEY]: { fields: { [SOURCE_CERTIFICATE_ATTRIBUTE]: { stringValue: 'b' } } } } });
  const summary = summariseProcessingRequest(Buffer.concat([first, encode(connect('[fd00::1]:8443')), second]));
  assert.deepEqual(summary, { request: 'request_headers', authority: '[fd00::1]:8443', attributes: { direction: undefined, certificate: 'b' } });
  // The proto decoder agrees.
  const decoded = externalProcessorService().service.Process!.requestDeserialize(Buffer.concat([first, second])) as { attributes: Record<string, { fields: Record<string, unknown> }> };
  assert.deepEqual(Object.keys(decoded.attributes[EXT_PROC_ATTRIBUTES_KEY]!.fields), [SOURCE_CERTIFICATE_ATTRIBUTE]);
});

test('truncated attributes are a WireError', () => {
  const buf = withAttributes({ [SOURCE_CERTIFICATE_ATTRIBUTE]: { stringValue: PEM }, [DIRECTION_ATTRIBUTE]: { numberValue: 2 } });
  const start = encode(connect('10.0.0.1:443')).length;
  for (let cut = start + 1; cut < buf.length; cut++) {
    assert.throws(() => summariseProcessingRequest(buf.subarray(0, cut)), WireError, `cut at ${cut}`);
  }
});

const value = fc.oneof(
  fc.record({ numberValue: fc.double({ noNaN: true }) }),
  fc.record({ stringValue: fc.string({ unit: 'grapheme', maxLength: 40 }) }),
  fc.record({ boolValue: fc.boolean() }),
  fc.record({ nullValue: fc.constant('NULL_VALUE') }),
  fc.record({ structValue: fc.record({ fields: fc.dictionary(fc.string({ maxLength: 4 }), fc.record({ stringValue: fc.string({ maxLength: 4 }) }), { maxKeys: 2 }) }) }),
);
const key = fc.oneof(fc.constantFrom(DIRECTION_ATTRIBUTE, SOURCE_CERTIFICATE_ATTRIBUTE, 'xds.cluster_name'), fc.string({ maxLength: 12 }));

test('generated attributes: the decoder reads what was encoded', () => {
  fc.assert(
    fc.property(fc.dictionary(key, value, { maxKeys: 5 }), fc.constantFrom(EXT_PROC_ATTRIBUTES_KEY, 'other'), (fields, filter) => {
      const summary = summariseProcessingRequest(withAttributes(fields, filter));
      const ours = filter === EXT_PROC_ATTRIBUTES_KEY;
      const d = fields[DIRECTION_ATTRIBUTE] as { numberValue?: number } | undefined;
      const c = fields[SOURCE_CERTIFICATE_ATTRIBUTE] as { stringValue?: string } | undefined;
      const direction = ours && d?.numberValue !== undefined ? d.numberValue : undefined;
      const certificate = ours && c?.stringValue !== undefined ? c.stringValue : undefined;
      const expected = direction === undefined && certificate === undefined ? undefined : { direction, certificate };
      assert.deepEqual(summary.attributes, expected);
      assert.equal(summary.authority, '10.0.0.1:443');
    }),
    { seed: 4343, numRuns: 400 },
  );
});

test('generated garbage, and valid messages with bytes flipped or cut: a summary or a WireError, nothing else', () => {
  const valid = withAttributes({ [SOURCE_CERTIFICATE_ATTRIBUTE]: { stringValue: PEM }, [DIRECTION_ATTRIBUTE]: { numberValue: 2 } });
  const mutated = fc
    .tuple(fc.array(fc.tuple(fc.nat(valid.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }), fc.nat(valid.length))
    .map(([flips, cut]) => {
      const copy = Buffer.from(valid);
      for (const [at, byte] of flips) copy[at] = byte;
      return copy.subarray(0, Math.max(1, cut));
    });
  fc.assert(
    fc.property(fc.oneof(mutated, fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a))), (buf) => {
      try {
        const summary = summariseProcessingRequest(buf);
        assert.equal(typeof summary.authority, 'string');
      } catch (err) {
        assert.ok(err instanceof WireError, `threw ${String(err)}`);
      }
    }),
    { seed: 4444, numRuns: 3000 },
  );
});
