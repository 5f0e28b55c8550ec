/**
 * Property-based: generated ext_proc answers — any `ProcessingResponse` kind for any phase (request headers, request
 * body, response headers, immediate and streamed immediate responses, empty ones), header mutations with invalid
 * names and values and pseudo-headers, body mutations, routes that are the worker, other spellings of it, refused or
 * garbage, mode and timeout overrides, a processor that ignores a message, ends the stream or fails it — from a
 * scripted ext_proc server, for ordinary HTTP/1.1 and HTTP/2 client requests through the proxy in this process
 * (no actor cache, so every request asks ext_proc; response headers and buffered request bodies sent to it). The
 * process lives on; every client request gets one well-formed answer or a reset/close; a request goes only where
 * ext_proc routed it (never to the decoy the client named), keeps the client's authority, carries no internal header
 * ext_proc did not set; an immediate response reaches no worker; no request stays in flight.
 */
import { test } from 'node:test';
import { extProcCaseArb } from '../testing/fuzz/arbitraries.js';
import { sendClientRequest } from '../testing/fuzz/client-request.js';
import { extProcWire, type ExtProcWire } from '../testing/fuzz/extproc-wire.js';
import { forwardedProblems } from '../testing/fuzz/forwarded-checks.js';
import { startScriptedStack } from '../testing/fuzz/scripted-stack.js';
import { routeTo } from '../testing/helpers.js';
import type { ProcessingResponse } from '../stages/ext-proc/messages.js';
import { actorHost } from '../../lib/testing/actors.js';
import { fuzzTarget } from '../testing/fuzz/fuzz-target.js';
import { withDeadline } from '../testing/fuzz/run.js';

const AUTHORITY = actorHost('scripted-extproc');

/** What ext_proc answers once the generated answers are used up: the route to the worker, or CONTINUE. */
function defaultAnswer(kind: string, worker: string): ProcessingResponse {
  if (kind === 'request_headers') return routeTo(worker);
  return { [kind]: { response: { status: 'CONTINUE' } } } as ProcessingResponse;
}

test(
  'generated ext_proc answers: the process lives, the client gets one well-formed answer or a close, requests go only where ext_proc said',
  fuzzTarget({
    file: import.meta.url,
    runs: 50,
    start: () =>
      startScriptedStack([
        '--actor-cache', 'off',
        '--extproc-processing-mode', 'response_header_mode=SEND',
        '--extproc-processing-mode', 'request_body_mode=BUFFERED',
        '--extproc-allow-mode-override',
        '--extproc-max-message-timeout-ms', '2000',
        '--extproc-message-timeout-ms', '1000',
      ]),
    cases: () => extProcCaseArb,
    async send(c, { stack, n, count, settle }) {
      const id = `fz-${n}`;
      stack.worker.reset();
      stack.worker.take();
      const worker = stack.worker.address;
      const wires: ExtProcWire[] = [];
      let defaulted = false;
      stack.extproc.script = (msg, call) => {
        const a = c.answers[wires.length];
        const wire = a === undefined ? undefined : extProcWire(a, worker, msg.kind);
        if (wire !== undefined) wires.push(wire);
        if (wire === undefined) {
          defaulted = true;
          return defaultAnswer(msg.kind, worker);
        }
        if (typeof wire.messages === 'string') return wire.messages;
        for (const m of wire.messages.slice(0, -1)) call.write(m);
        return wire.messages.at(-1) as ProcessingResponse;
      };
      const answer = await withDeadline(sendClientRequest(stack.proxy.address, c.request, AUTHORITY, id, stack.decoy.address), 30_000, 'the client request');
      count(`${c.request.protocol} ${answer.status ?? 'none'}`);
      const problems = [...answer.problems];
      problems.push(...(await settle()));
      const received = stack.worker.take();
      const routed = defaulted || wires.some((w) => w.route === worker);
      if (received.length > 0 && !routed) problems.push(`the worker got ${received.length} request(s), though no ext_proc answer routed there`);
      if (c.answers[0]?.kind === 'immediate' && received.length > 0) problems.push('ext_proc answered the request headers with an immediate response, and the worker was asked anyway');
      const setByExtProc = new Map<string, string[]>();
      for (const [name, value] of wires.flatMap((w) => w.sets)) setByExtProc.set(name, [...(setByExtProc.get(name) ?? []), value]);
      const appendedByExtProc = new Map<string, number>();
      for (const name of wires.flatMap((w) => w.appends)) appendedByExtProc.set(name, (appendedByExtProc.get(name) ?? 0) + 1);
      for (const r of received) {
        count('to the worker');
        problems.push(...forwardedProblems({ at: r.at, rawHeaders: r.request.rawHeaders }, { upstreams: new Set([worker]), setByExtProc, appendedByExtProc }, stack.decoy.address));
        const hosts = r.request.rawHeaders.filter((_, i, a) => i % 2 === 1 && (a[i - 1] as string).toLowerCase() === 'host');
        if (hosts.length !== 1 || hosts[0] !== AUTHORITY) problems.push(`the worker got Host ${JSON.stringify(hosts)}, the client asked for ${AUTHORITY}`);
      }
      problems.push(...stack.worker.takeProblems());
      return problems;
    },
  }),
);
