/** ext-proc's refresh-ahead re-validation against a fake client: the message it sends, and how each answer reads. */
import { test } from 'node:test';
import { defaultExtProcSettings } from './settings.js';

const NO_FORWARD_RULES = defaultExtProcSettings().forwardRules;
import assert from 'node:assert/strict';
import { routeTo } from '../../testing/helpers.js';
import type { MessageResult, ExtProcClient } from './client.js';
import type { ProcessingRequest } from './messages.js';
import { createExtProcRevalidator, revalidationOf } from './revalidate.js';

test('one stream per refresh, carrying the request_headers of GET / to the actor host, closed afterwards', async () => {
  const sent: ProcessingRequest[] = [];
  let closed = 0;
  let opened = 0;
  const client: Pick<ExtProcClient, 'open'> = {
    open: () => {
      opened++;
      return {
        roundTrip: async (m) => (sent.push(m), { kind: 'response', response: routeTo('127.0.1.3:8443') }),
        receive: async () => ({ kind: 'closed' }),
        close: () => void closed++,
      };
    },
  };
  const r = await createExtProcRevalidator(client, NO_FORWARD_RULES).revalidate({ authority: 'counter.demo.actors.example:8080', scheme: 'http' }, new AbortController().signal);
  assert.deepEqual(r, { kind: 'routed', address: '127.0.1.3:8443' });
  assert.deepEqual([opened, closed], [1, 1]);
  const msg = sent[0]?.request_headers;
  assert.equal(msg?.end_of_stream, true);
  const headers = msg?.headers.headers.map((h) => [h.key, h.raw_value.toString('latin1')]);
  assert.deepEqual(headers?.slice(0, 4), [
    [':authority', 'counter.demo.actors.example:8080'],
    [':path', '/'],
    [':method', 'GET'],
    [':scheme', 'http'],
  ]);
  assert.deepEqual(headers?.slice(4).map(([k]) => k), ['x-request-id', 'x-forwarded-proto']);
  assert.ok(sent[0]?.protocol_config, 'the first message carries the protocol config, as Envoy sends it');

  const aborted = new AbortController();
  aborted.abort();
  assert.equal((await createExtProcRevalidator(client, NO_FORWARD_RULES).revalidate({ authority: 'x', scheme: 'http' }, aborted.signal)).kind, 'failed');
  assert.equal(opened, 1, 'no stream at shutdown');
});

// Every answer that is not a route to a literal address is a failed refresh.
for (const [name, result, expected] of [
  ['a route', { kind: 'response', response: routeTo('[::1]:8443') }, { kind: 'routed', address: '[::1]:8443' }],
  ['an immediate response', { kind: 'response', response: { immediate_response: { status: { code: 'ServiceUnavailable' } } } }, 'immediate response 503'],
  ['a request_headers answer without original_dst', { kind: 'response', response: { request_headers: { response: {} } } }, 'no original_dst in the answer'],
  ['a non-literal original_dst', { kind: 'response', response: routeTo('worker-1:8443') }, 'original_dst "worker-1:8443" is not a literal ip:port'],
  ['a wrong message', { kind: 'response', response: { response: 'response_body' } }, 'expected a request_headers response, got response_body'],
  ['a stream error', { kind: 'error', code: 'UNAVAILABLE', details: 'down' }, 'stream error UNAVAILABLE: down'],
  ['a timeout', { kind: 'timeout' }, 'message timeout'],
  ['a closed stream', { kind: 'closed' }, 'the processor closed the stream'],
  ['an abort', { kind: 'aborted' }, 'aborted'],
] as const) {
  test(`revalidationOf: ${name}`, () => {
    const r = revalidationOf(result as MessageResult);
    assert.deepEqual(r, typeof expected === 'string' ? { kind: 'failed', reason: expected } : expected);
  });
}
