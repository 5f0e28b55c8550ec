/**
 * Property-based: generated HTTP/1.1 requests (methods, request targets, header fields, framings, pipelining, split
 * writes; plain and over TLS) against the real path in this process — proxy, extproc and apiserver-stub with its
 * workers. Whatever a client sends, the proxy process lives on, every connection ends with well-formed answers or a
 * close, a well-formed request is answered, no worker receives a client's internal header or a field its Connection
 * named, nothing connects to an address only the client named, and no request stays in flight.
 */
import { after, before, test } from 'node:test';
import { http1CaseArb } from '../testing/fuzz/arbitraries.js';
import { afterCase, afterRun, caseStats } from '../testing/fuzz/case-checks.js';
import { FaultRecorder } from '../testing/fuzz/faults.js';
import { forwardedProblems } from '../testing/fuzz/forwarded-checks.js';
import { http1Problems } from '../testing/fuzz/http1-checks.js';
import { sendHttp1, splitAt } from '../testing/fuzz/http1-client.js';
import { http1Wire } from '../testing/fuzz/http1-wire.js';
import { startRealStack, type RealStack } from '../testing/fuzz/real-stack.js';
import { checkProperty, withDeadline } from '../testing/fuzz/run.js';
import { compiledPath } from '../testing/fuzz/compiled-path.js';

const FILE = compiledPath(import.meta.url);
const RUNS = 60;

let stack: RealStack;
let faults: FaultRecorder;
const errors = new Map<string, number>();
/** What the run covered: answer statuses, closes without an answer, requests that reached a worker. */
const seen = new Map<string, number>();
const count = (key: string): void => void seen.set(key, (seen.get(key) ?? 0) + 1);

before(async () => {
  faults = new FaultRecorder();
  stack = await startRealStack();
});

after(async () => {
  // Bounded: a proxy that cannot stop is reported by the run's own end check, and must not hang the file.
  await withDeadline(stack?.close() ?? Promise.resolve(), 40_000, 'closing the stack').catch((err: unknown) => console.error(String(err)));
  faults?.stop();
});

test('generated HTTP/1.1 requests: the process lives, each gets a well-formed answer or a close, nothing forged or named reaches a worker', async (t) => {
  const own = new Set([stack.plain, stack.tls, stack.proxy.admin.replace('http://', '')]);
  let caseNo = 0;
  const settings = await checkProperty(FILE, http1CaseArb({ actors: stack.actors, decoy: stack.decoy.address }), async (c) => {
    const n = caseNo++;
    const before = await caseStats(stack.proxy);
    stack.requests.take();
    const wires = c.requests.map((r, i) => http1Wire(r, `fz-${n}-${i}`, c.tls));
    const leading = wires.findIndex((w) => w.completeness !== 'complete');
    const expected = leading === -1 ? wires.length : leading;
    const out = await withDeadline(
      sendHttp1({
        address: c.tls ? stack.tls : stack.plain,
        tls: c.tls,
        parts: splitAt(Buffer.concat(wires.map((w) => w.bytes)), c.cuts),
        methods: wires.map((w) => w.method),
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
    problems.push(...(await afterCase({ proxy: stack.proxy, faults, decoy: stack.decoy }, before, errors)));
    for (const r of stack.requests.take()) {
      if (own.has(r.at)) continue;
      count('to a worker');
      problems.push(...forwardedProblems(r, { upstreams: stack.workers }, stack.decoy.address));
    }
    if (problems.length > 0) throw new Error(problems.join('\n'));
  }, RUNS);
  const end = await afterRun({ proxy: stack.proxy, faults, decoy: stack.decoy });
  if (end.length > 0) throw new Error(`at the end of the run (seed ${settings.seed}):\n${end.join('\n')}`);
  t.diagnostic(`seed ${settings.seed}, ${settings.numRuns} case(s); seen ${JSON.stringify(Object.fromEntries(seen))}; proxy error-level log lines ${JSON.stringify(Object.fromEntries(errors))}`);
});
