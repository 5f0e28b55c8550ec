/**
 * Property-based: generated HTTP/1.1 requests (methods, request targets, header fields, framings, pipelining, split
 * writes; plain and over TLS) against the real path in this process — proxy, extproc and apiserver-stub with its
 * workers. Whatever a client sends, the proxy process lives on, every connection ends with well-formed answers or a
 * close, a well-formed request is answered, no worker receives a client's internal header or a field its Connection
 * named, nothing connects to an address only the client named, and no request stays in flight.
 */
import { test } from 'node:test';
import { http1CaseArb } from '../testing/fuzz/arbitraries.js';
import { fuzzTarget } from '../testing/fuzz/fuzz-target.js';
import { http1Problems } from '../testing/fuzz/http1-checks.js';
import { sendHttp1, splitAt } from '../testing/fuzz/http1-client.js';
import { http1Wire } from '../testing/fuzz/http1-wire.js';
import { startRealStack, workerRequestProblems } from '../testing/fuzz/real-stack.js';
import { withDeadline } from '../testing/fuzz/run.js';

test(
  'generated HTTP/1.1 requests: the process lives, each gets a well-formed answer or a close, nothing forged or named reaches a worker',
  fuzzTarget({
    file: import.meta.url,
    runs: 60,
    start: () => startRealStack(),
    cases: (stack) => http1CaseArb({ actors: stack.actors, decoy: stack.decoy.address }),
    async send(c, { stack, n, count, settle }) {
      stack.requests.take();
      const wires = c.requests.map((r, i) => http1Wire(r, `fz-${n}-${i}`, c.tls));
      const leading = wires.findIndex((w) => w.completeness !== 'complete');
      const expected = leading === -1 ? wires.length : leading;
      const out = await withDeadline(
        sendHttp1({
          address: c.tls ? stack.tls : stack.plain,
          tls: c.tls,
          parts: splitAt(Buffer.concat(wires.map((w) => w.bytes)), c.cuts),
          methods: wires.flatMap((w) => w.methods),
          expected,
          halfClose: expected < wires.length,
          deadlineMs: 10_000,
        }),
        30_000,
        'the client connection',
      );
      for (const a of out.reading.answers) count(String(a.status));
      if (out.reading.answers.length === 0) count(out.closed ? 'closed' : 'open');
      const problems = http1Problems(out, wires);
      problems.push(...(await settle()), ...workerRequestProblems(stack, count));
      return problems;
    },
  }),
);
