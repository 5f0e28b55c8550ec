/**
 * Property-based: generated HTTP/2 header blocks — any subset and order of pseudo-headers, CONNECT with and without
 * `:protocol`, absent or empty `:path`, `:authority`, `:scheme`, upper-case and connection-specific fields, odd `te`,
 * huge and empty values, bodies — through node's http2 client where it accepts the block and as raw frames where it
 * does not, on h2c and on the HTTPS listener (ALPN h2), against the real path in this process (proxy, extproc,
 * apiserver-stub). The proxy process lives on, every stream is answered or reset (or its connection ends), every
 * answer is well-formed, no worker receives a client's internal header or a field its Connection named, nothing
 * connects to an address only the client named, and no request stays in flight.
 */
import { test } from 'node:test';
import { h2CaseArb } from '../testing/fuzz/arbitraries.js';
import { fuzzTarget } from '../testing/fuzz/fuzz-target.js';
import { sendH2 } from '../testing/fuzz/h2-client.js';
import { startRealStack, workerRequestProblems } from '../testing/fuzz/real-stack.js';
import { withDeadline } from '../testing/fuzz/run.js';

test(
  'generated HTTP/2 header blocks: the process lives, each stream is answered or reset, nothing forged or named reaches a worker',
  fuzzTarget({
    file: import.meta.url,
    runs: 60,
    start: () => startRealStack(),
    cases: (stack) => h2CaseArb({ actors: stack.actors, decoy: stack.decoy.address }),
    async send(c, { stack, n, count, settle }) {
      stack.requests.take();
      const streams = c.streams.map((s, i) => ({ ...s, id: `fz-${n}-${i}` }));
      const outcomes = await withDeadline(sendH2({ address: c.tls ? stack.tls : stack.plain, tls: c.tls, via: c.via, streams, deadlineMs: 10_000 }), 30_000, 'the client connection');
      const problems: string[] = [];
      for (const o of outcomes) {
        count(o.status === undefined ? `${o.via} no status` : `${o.via} ${o.status}`);
        if (!o.done) problems.push(`stream ${o.id} (${o.via}): no answer, reset or close within the deadline`);
        if (o.problem !== undefined) problems.push(`stream ${o.id} (${o.via}): ${o.problem}`);
      }
      problems.push(...(await settle()), ...workerRequestProblems(stack, count));
      return problems;
    },
  }),
);
