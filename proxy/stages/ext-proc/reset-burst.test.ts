/**
 * A burst of cancelled ext_proc streams (clients resetting a flood of misses) must not fail the next miss. The
 * processor's HTTP/2 server (Node's, as every grpc-js server) allows a burst of about 1,000 stream resets per
 * connection, refilled at 33 per second; beyond that it closes the connection with GOAWAY(INTERNAL_ERROR), which
 * ends every stream on it, the ones opened before the GOAWAY arrives included. Such a stream's miss is retried on a
 * fresh connection, as when the processor restarts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Counters } from '../../ops/stats.js';
import { routeTo, silentLog, startScriptedExtProc, type ScriptedExtProc } from '../../testing/helpers.js';
import { testRequest } from '../../testing/proxy-request.js';
import { waitFor } from '../../../lib/testing/wait.js';
import { GrpcExtProcClient } from './grpc-client.js';
import { createExtProcFilter } from './filter.js';
import { defaultExtProcSettings } from './settings.js';
import type { ProcessingRequest } from './messages.js';

const UPSTREAM = '127.0.0.1:9';
/** Well over the processor's burst of resets (nghttp2's default: 1,000). */
const BURST = 2000;
const HEADERS: ProcessingRequest = { request_headers: { headers: { headers: [] }, end_of_stream: true } };

let ep: ScriptedExtProc;
/** While true the processor never answers (the burst's streams stay unanswered, so closing them resets them). */
let silent = false;

describe('reset-burst', () => {
  before(async () => {
    ep = await startScriptedExtProc(() => (silent ? 'ignore' : routeTo(UPSTREAM, '80')));
  });

  after(() => ep.close());

  function newClient(counters: Counters): GrpcExtProcClient {
    return new GrpcExtProcClient({ address: ep.address, messageTimeoutMs: 5000, counters, log: silentLog });
  }

  /** Opens `BURST` streams on `client`, waits until the processor has every first message, and resets them all. */
  async function resetBurst(client: GrpcExtProcClient): Promise<void> {
    assert.equal((await client.open().roundTrip(HEADERS)).kind, 'response', 'the channel is connected before the burst');
    silent = true;
    try {
      const seen = ep.seen.length;
      const streams = Array.from({ length: BURST }, () => client.open());
      for (const s of streams) void s.roundTrip(HEADERS);
      await waitFor(() => ep.seen.length - seen >= BURST, 20_000, 'the processor has every stream of the burst');
      for (const s of streams) s.close(); // unanswered: each is reset (RST_STREAM CANCEL), as when its client leaves
    } finally {
      silent = false;
    }
  }

  test('the channel: a stream opened right after a burst of resets ends with a connection loss, not a processor status', async () => {
    const counters = new Counters();
    const client = newClient(counters);
    try {
      await resetBurst(client);
      const result = await client.open().roundTrip(HEADERS);
      assert.equal(result.kind, 'error');
      assert.equal(result.kind === 'error' && result.code, 'INTERNAL');
      assert.equal(result.kind === 'error' && result.connectionLost, true, result.kind === 'error' ? result.details : '');
    } finally {
      client.close();
    }
  });

  test('a miss right after a burst of resets is retried on a fresh connection and routed, not answered 500', async () => {
    const counters = new Counters();
    const client = newClient(counters);
    const filter = createExtProcFilter({
      client,
      settings: defaultExtProcSettings(),
      retries: { policy: { budgetMs: 3000, maxWaiting: 16 }, counters },
    });
    try {
      await resetBurst(client);
      const ctx = testRequest();
      const result = await filter.onRequest?.(ctx);
      assert.deepEqual(result, { kind: 'continue' });
      assert.deepEqual(ctx.route, { address: UPSTREAM, source: 'extproc' });
      // The first stream was on the connection the processor closed: exactly one fresh stream, and it recovered.
      assert.equal(counters.tallies.extproc.retries.retried, 1);
      assert.equal(counters.tallies.extproc.retries.recovered, 1);
    } finally {
      client.close();
    }
  });
});
