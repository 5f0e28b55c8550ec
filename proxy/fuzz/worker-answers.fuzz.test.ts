/**
 * Property-based: generated worker answers — every status from 100 to 599 (101 and 421 with and without
 * `x-ate-assignment-stale: true` often), interim answers, connection-specific fields in heads and trailers, wrong,
 * duplicate and conflicting framings, odd status lines, and a close at any byte offset — from a scripted raw TCP
 * worker that a scripted ext_proc routes every request to, for ordinary HTTP/1.1 and HTTP/2 client requests
 * through the proxy in this process. The process lives on; every client request gets one well-formed answer or a
 * reset/close; no worker-only or connection-specific field reaches the client; a 101 reaches only a client that
 * asked to upgrade; a well-formed answer is relayed with its status and body; a stale answer is never relayed and is
 * asked again; the worker never receives a client's internal header; nothing connects to the decoy; no request
 * stays in flight.
 */
import { test } from 'node:test';
import { WORKER_HOP_FIELDS, workerCaseArb } from '../testing/fuzz/arbitraries.js';
import { sendClientRequest } from '../testing/fuzz/client-request.js';
import { forwardedProblems } from '../testing/fuzz/forwarded-checks.js';
import { fuzzTarget } from '../testing/fuzz/fuzz-target.js';
import { withDeadline } from '../testing/fuzz/run.js';
import { startScriptedStack } from '../testing/fuzz/scripted-stack.js';
import { workerWire } from '../testing/fuzz/worker-wire.js';
import { actorHost } from '../../lib/testing/actors.js';

const AUTHORITY = actorHost('scripted-worker');

/**
 * Fields of a worker's answer that never reach a client: its connection's (by value: the proxy has its own
 * keep-alive), the one its Connection names, the stale signal. (`Trailer` is relayed where the client's response can
 * carry trailers.)
 */
const WORKER_ONLY = new Set(WORKER_HOP_FIELDS.filter((f) => f.name !== 'Trailer').map((f) => `${f.name.toLowerCase()}: ${String(f.value)}`));
const NEVER_TO_CLIENT = new Set(['x-worker-hop', 'x-ate-assignment-stale']);

test(
  'generated worker answers: the process lives, the client gets one well-formed answer or a close, nothing worker-only leaks',
  fuzzTarget({
    file: import.meta.url,
    runs: 80,
    start: () => startScriptedStack(),
    cases: () => workerCaseArb,
    async send(c, { stack, n, count, settle }) {
      const id = `fz-${n}`;
      stack.worker.reset();
      stack.worker.take();
      const wires = c.answers.map((a) => workerWire(a, c.request.method));
      stack.worker.script = (req, i) => wires[i] ?? { bytes: Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'), close: false };
      const answer = await withDeadline(sendClientRequest(stack.proxy.address, c.request, AUTHORITY, id, stack.decoy.address), 30_000, 'the client request');
      count(`${c.request.protocol} ${answer.status ?? 'none'}`);
      const problems = [...answer.problems];
      for (const [name, value] of [...answer.headers, ...answer.trailers]) {
        const worker = WORKER_ONLY.has(`${name}: ${value}`) && !(name === 'upgrade' && answer.status === 101);
        if (worker || NEVER_TO_CLIENT.has(name)) problems.push(`the client got the worker's ${name}: ${value}`);
      }
      if (answer.status === 101 && !c.request.upgrade) problems.push('a client that did not ask to upgrade got 101');
      const first = wires[0];
      if (first?.clean === true && !c.request.upgrade && c.request.protocol === 'h2' && first.repeatsSingleField) {
        // A head HTTP/2 cannot carry: the proxy's 502, never the worker's answer cut down to one of its values.
        if (answer.status !== 502) problems.push(`the worker answered ${first.status} repeating a field HTTP/2 carries once, the client on HTTP/2 got ${String(answer.status)} (not 502)`);
      } else if (first?.clean === true && !c.request.upgrade) {
        if (answer.status === undefined) problems.push(`the worker answered ${first.status} (well-formed), the client got no answer`);
        else if (answer.status !== first.status) problems.push(`the worker answered ${first.status} (well-formed), the client got ${answer.status}`);
        else if (answer.bodyLength !== undefined && answer.bodyLength !== first.bodyLength) problems.push(`the worker sent ${first.bodyLength} body byte(s), the client got ${answer.bodyLength}`);
      }
      problems.push(...(await settle()));
      const received = stack.worker.take();
      if (first?.stale === true && !c.request.upgrade && received.length < 2) problems.push(`the worker answered 421 + x-ate-assignment-stale and was asked ${received.length} time(s) in all`);
      for (const r of received) problems.push(...forwardedProblems({ at: r.at, rawHeaders: r.request.rawHeaders }, { upstreams: new Set([stack.worker.address]) }, stack.decoy.address));
      problems.push(...stack.worker.takeProblems());
      return problems;
    },
  }),
);
