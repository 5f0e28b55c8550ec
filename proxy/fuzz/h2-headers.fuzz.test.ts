/**
 * Property-based: generated HTTP/2 header blocks — any subset and order of pseudo-headers, CONNECT with and without
 * `:protocol`, absent or empty `:path`, `:authority`, `:scheme`, upper-case and connection-specific fields, odd `te`,
 * huge and empty values, bodies — through node's http2 client where it accepts the block and as raw frames where it
 * does not, on h2c and on the HTTPS listener (ALPN h2), against the real path in this process (proxy, extproc,
 * apiserver-stub). The proxy process lives on, every stream is answered or reset (or its connection ends), every
 * answer is well-formed, no worker receives a client's internal header or a field its Connection named, nothing
 * connects to an address only the client named, and no request stays in flight.
 */
import { after, before, test } from 'node:test';
import { h2CaseArb } from '../testing/fuzz/arbitraries.js';
import { afterCase, afterRun, caseStats } from '../testing/fuzz/case-checks.js';
import { compiledPath } from '../testing/fuzz/compiled-path.js';
import { FaultRecorder } from '../testing/fuzz/faults.js';
import { forwardedProblems } from '../testing/fuzz/forwarded-checks.js';
import { sendH2 } from '../testing/fuzz/h2-client.js';
import { startRealStack, type RealStack } from '../testing/fuzz/real-stack.js';
import { checkProperty, withDeadline } from '../testing/fuzz/run.js';

const FILE = compiledPath(import.meta.url);
const RUNS = 60;

let stack: RealStack;
let faults: FaultRecorder;
const errors = new Map<string, number>();
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

test('generated HTTP/2 header blocks: the process lives, each stream is answered or reset, nothing forged or named reaches a worker', async (t) => {
  const own = new Set([stack.plain, stack.tls, stack.proxy.admin.replace('http://', '')]);
  let caseNo = 0;
  const settings = await checkProperty(FILE, h2CaseArb({ actors: stack.actors, decoy: stack.decoy.address }), async (c) => {
    const n = caseNo++;
    const before = await caseStats(stack.proxy);
    stack.requests.take();
    const streams = c.streams.map((s, i) => ({ ...s, id: `fz-${n}-${i}` }));
    const outcomes = await withDeadline(sendH2({ address: c.tls ? stack.tls : stack.plain, tls: c.tls, via: c.via, streams, deadlineMs: 10_000 }), 30_000, 'the client connection');
    const problems: string[] = [];
    for (const o of outcomes) {
      count(o.status === undefined ? `${o.via} no status` : `${o.via} ${o.status}`);
      if (!o.done) problems.push(`stream ${o.id} (${o.via}): no answer, reset or close within the deadline`);
      if (o.problem !== undefined) problems.push(`stream ${o.id} (${o.via}): ${o.problem}`);
    }
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
