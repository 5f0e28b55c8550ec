/** The server's answers as Envoy reads them: one append control per header (`append: false`), values in raw_value. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { externalProcessorService } from './protocol.js';
import { immediateResponse, routeResponse, RouteResponses } from './responses.js';

type Decoded = {
  request_headers?: { response?: { header_mutation?: { set_headers?: { header: { key: string; value: string; raw_value: Buffer }; append: { value: boolean } | null; append_action: string }[] } } };
  immediate_response?: { headers?: { set_headers?: { append: { value: boolean } | null; append_action: string }[] } };
};

function decode(encoded: Buffer): Decoded {
  return externalProcessorService().service.Process!.responseDeserialize(encoded) as Decoded;
}

test('set headers carry only append: false (overwrite), never also an append_action', () => {
  const fromCache = decode(new RouteResponses(8443).get('127.0.1.5', 9090));
  const built = decode(externalProcessorService().service.Process!.responseSerialize(routeResponse('127.0.1.5', 8443, 9090)));
  for (const answer of [fromCache, built]) {
    const [set] = answer.request_headers?.response?.header_mutation?.set_headers ?? [];
    assert.equal(set?.header.key, 'x-ate-target-port');
    assert.equal(set?.header.raw_value.toString(), '9090');
    assert.equal(set?.header.value, '');
    assert.deepEqual(set?.append, { value: false });
    assert.equal(set?.append_action, 'APPEND_IF_EXISTS_OR_ADD', 'append_action is left at its default (not on the wire)');
  }
  const immediate = decode(externalProcessorService().service.Process!.responseSerialize(immediateResponse(404, 'no', 'details') as Record<string, unknown>));
  for (const set of immediate.immediate_response?.headers?.set_headers ?? []) {
    assert.deepEqual(set.append, { value: false });
    assert.equal(set.append_action, 'APPEND_IF_EXISTS_OR_ADD');
  }
});
