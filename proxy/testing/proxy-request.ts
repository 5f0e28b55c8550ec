/** Test helper: a `ProxyRequest` on a recording exchange (for chain, response-phase and filter tests). */
import { ProxyRequest } from '../request/context.js';
import { ForwardHeaders } from '../http/header-list.js';
import { RecordingExchange } from './recording-exchange.js';
import { silentLog } from './helpers.js';

export type TestRequest = ProxyRequest & { readonly exchange: RecordingExchange };

export function testRequest(method = 'GET', startedAt = performance.now(), authority = 'a.demo.example', exchange: RecordingExchange = new RecordingExchange()): TestRequest {
  return new ProxyRequest({
    exchange,
    requestId: 'rid',
    method,
    path: '/p',
    authority,
    scheme: 'http',
    remoteAddress: '127.0.0.1',
    headers: new ForwardHeaders(['host', authority]),
    body: null,
    startedAt,
    log: silentLog,
  }) as TestRequest;
}
