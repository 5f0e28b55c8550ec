/** The ext-proc filter against a fake ext_proc client (no gRPC): what it sends, and how it applies each answer. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProxyRequest } from '../../request/context.js';
import { ForwardHeaders } from '../../http/header-list.js';
import { ChainResponse } from '../../chain/chain-response.js';
import { RecordingExchange } from '../../testing/recording-exchange.js';
import { EXT_PROC_SLOT } from './request-state.js';
import { pino } from 'pino';
import { silentLog, routeTo } from '../../testing/helpers.js';
import { createExtProcFilter } from './filter.js';
import type { MessageResult, ExtProcClient, ExtProcStream } from './client.js';
import type { ProcessingRequest } from './messages.js';
import { defaultExtProcSettings } from './settings.js';

function options(client: Pick<ExtProcClient, 'open'>, o: { failureModeAllow: boolean; send: boolean }) {
  const base = defaultExtProcSettings();
  return {
    client,
    settings: defaultExtProcSettings({
      failureModeAllow: o.failureModeAllow,
      processingMode: { ...base.processingMode, responseHeaderMode: o.send ? 'SEND' : 'SKIP' },
    }),
  };
}

/** A client whose streams answer from a script, and record what they were sent and whether they were closed. */
function fakeClient(answers: MessageResult[]) {
  const streams: { sent: ProcessingRequest[]; closed: boolean }[] = [];
  const client: Pick<ExtProcClient, 'open'> = {
    open(): ExtProcStream {
      const record = { sent: [] as ProcessingRequest[], closed: false };
      streams.push(record);
      return {
        roundTrip: async (message) => {
          record.sent.push(message);
          return answers.shift() ?? { kind: 'closed' };
        },
        receive: async () => answers.shift() ?? { kind: 'closed' },
        close: () => void (record.closed = true),
      };
    },
  };
  return { client, streams };
}

function request(method = 'GET', log = silentLog): ProxyRequest {
  return new ProxyRequest({
    exchange: new RecordingExchange(),
    requestId: 'rid',
    method,
    path: '/p?q=1',
    authority: 'a.demo.example',
    scheme: 'http',
    remoteAddress: '127.0.0.1',
    headers: new ForwardHeaders(['host', 'a.demo.example', 'x-a', '1']),
    body: null,
    startedAt: 0,
    log,
  });
}

const respond = (response: ReturnType<typeof routeTo>): MessageResult => ({ kind: 'response', response });

test('sends the request headers Envoy would, applies the route, and closes the stream; the time spent is recorded', async () => {
  const { client, streams } = fakeClient([respond(routeTo('127.0.1.1:8443', '9090'))]);
  const filter = createExtProcFilter(options(client, { failureModeAllow: false, send: false }));
  const ctx = request();
  assert.deepEqual(await filter.onRequest?.(ctx), { kind: 'continue' });
  assert.deepEqual(ctx.route, { address: '127.0.1.1:8443', source: 'extproc' });
  assert.equal(ctx.headers.get('x-ate-target-port'), '9090');
  assert.equal(streams.length, 1);
  assert.equal(streams[0]?.closed, true);
  const sent = streams[0]?.sent[0];
  assert.equal(sent?.request_headers?.end_of_stream, true, 'no body');
  const names = sent?.request_headers?.headers?.headers?.map((h) => h.key);
  assert.deepEqual(names, [':authority', ':path', ':method', ':scheme', 'x-a']);
  assert.equal(typeof EXT_PROC_SLOT.get(ctx)?.elapsedMs, 'number');
  assert.equal(filter.onUpstreamResponse, undefined, 'the filter has no upstream phase');
  assert.equal(typeof filter.onDone, 'function', 'request headers SEND: a streamed immediate response can outlive the request phase, so the request\'s end closes its stream');
  assert.equal(filter.onResponse, undefined, 'without response headers there is no response phase');
});

test('a routed request opens no stream', async () => {
  const { client, streams } = fakeClient([]);
  const filter = createExtProcFilter(options(client, { failureModeAllow: false, send: false }));
  const ctx = request();
  ctx.route = { address: '127.0.1.9:8443', source: 'cache' };
  assert.deepEqual(await filter.onRequest?.(ctx), { kind: 'continue' });
  assert.equal(streams.length, 0);
  assert.equal(EXT_PROC_SLOT.get(ctx), undefined);
});

test('timeouts and stream errors answer 504 and 500, or continue with --failure-mode-allow; the stream is closed', async () => {
  for (const [result, status] of [
    [{ kind: 'timeout' }, 504],
    [{ kind: 'error', code: 'UNAVAILABLE', details: 'down' }, 500],
  ] as const) {
    const strict = fakeClient([result]);
    const r = await createExtProcFilter(options(strict.client, { failureModeAllow: false, send: true })).onRequest?.(request());
    assert.equal(r?.kind === 'reply' && r.reply.status, status);
    assert.equal(strict.streams[0]?.closed, true);
    const allow = fakeClient([result]);
    const ctx = request();
    assert.deepEqual(await createExtProcFilter(options(allow.client, { failureModeAllow: true, send: true })).onRequest?.(ctx), { kind: 'continue' });
    assert.equal(ctx.route, undefined);
    assert.equal(allow.streams[0]?.closed, true);
  }
});

test('an immediate response becomes a local reply; an unroutable original_dst a 503', async () => {
  const immediate = fakeClient([respond({ immediate_response: { status: { code: 'NotFound' }, body: Buffer.from('nope') } })]);
  const r = await createExtProcFilter(options(immediate.client, { failureModeAllow: false, send: false })).onRequest?.(request());
  assert.equal(r?.kind === 'reply' && r.reply.status, 404);
  const named = fakeClient([respond(routeTo('worker.internal:8443'))]);
  const ctx = request();
  const bad = await createExtProcFilter(options(named.client, { failureModeAllow: false, send: false })).onRequest?.(ctx);
  assert.equal(bad?.kind === 'reply' && bad.reply.status, 503);
  assert.equal(ctx.route, undefined);
});

test('processing_mode response_header_mode=SEND: the stream stays open for the response headers, then closes; a re-run closes it', async () => {
  const { client, streams } = fakeClient([respond(routeTo('127.0.1.1:8443')), { kind: 'closed' }, respond(routeTo('127.0.1.2:8443'))]);
  const filter = createExtProcFilter(options(client, { failureModeAllow: false, send: true }));
  const ctx = request();
  await filter.onRequest?.(ctx);
  assert.equal(streams[0]?.closed, false);
  const response = ChainResponse.upstream(200, ['Content-Type', 'text/plain']);
  const decision = await filter.onResponse?.(ctx, response);
  assert.equal(decision, undefined, 'the response is kept');
  assert.deepEqual([response.status, response.headers.list], [200, ['Content-Type', 'text/plain']]);
  assert.equal(EXT_PROC_SLOT.get(ctx)?.stream, undefined);
  assert.equal(streams[0]?.closed, true);
  const sent = streams[0]?.sent[1];
  assert.deepEqual(sent?.response_headers?.headers?.headers?.map((h) => [h.key, h.raw_value?.toString()]), [[':status', '200'], ['content-type', 'text/plain']]);

  const rerun = request();
  await filter.onRequest?.(rerun);
  assert.equal(streams[1]?.closed, false);
  filter.onRerun?.(rerun, 'stale');
  assert.equal(streams[1]?.closed, true);
});

test('a processor that sends header values only in `value` is logged once per stream (the values read as empty)', async () => {
  const lines: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
  const valueOnly = (key: string) => ({ header: { key, value: 'v' } });
  const answer = routeTo('127.0.1.1:8443') as unknown as { request_headers: { response: { header_mutation: { set_headers: unknown[] } } } };
  answer.request_headers.response.header_mutation.set_headers.push(valueOnly('x-one'), valueOnly('x-two'));
  const responseAnswer = { response_headers: { response: { header_mutation: { set_headers: [valueOnly('x-three')] } } } };
  const { client } = fakeClient([respond(answer as never), respond(responseAnswer as never)]);
  const ctx = request('GET', log);
  const filter = createExtProcFilter(options(client, { failureModeAllow: false, send: true }));
  await filter.onRequest?.(ctx);
  assert.equal(ctx.headers.get('x-one'), '');
  const response = ChainResponse.upstream(200, []);
  const decision = await filter.onResponse?.(ctx, response);
  assert.equal(decision, undefined);
  assert.deepEqual([response.status, response.headers.list], [200, ['x-three', '']]);
  assert.equal(lines.filter((l) => l.includes('only in `value`')).length, 1);
});

test('a request whose client already left opens no stream (its signal is aborted even if first asked for now)', async () => {
  const { client, streams } = fakeClient([respond(routeTo('127.0.1.1:8443'))]);
  const filter = createExtProcFilter(options(client, { failureModeAllow: false, send: false }));
  const ctx = request();
  ctx.clientState = 'closed';
  ctx.abortFilters(); // before anyone asked for the signal: nothing to abort yet
  assert.deepEqual(await filter.onRequest?.(ctx), { kind: 'continue' });
  assert.equal(streams.length, 0);
  assert.equal(ctx.route, undefined);
});
