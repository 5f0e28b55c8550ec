/** Test helper: a `ProxyRequest` on node objects that are never connected (for chain and response-phase tests). */
import http from 'node:http';
import net from 'node:net';
import { ProxyRequest } from '../request/context.js';
import { ForwardHeaders } from '../request/headers.js';
import { silentLog } from './helpers.js';

export function testRequest(method = 'GET', startedAt = performance.now()): ProxyRequest {
  const req = new http.IncomingMessage(new net.Socket());
  const res = new http.ServerResponse(req);
  return new ProxyRequest({
    req,
    res,
    requestId: 'rid',
    method,
    path: '/p',
    authority: 'a.demo.example',
    scheme: 'http',
    remoteAddress: '127.0.0.1',
    headers: new ForwardHeaders(['host', 'a.demo.example']),
    body: null,
    startedAt,
    log: silentLog,
  });
}
