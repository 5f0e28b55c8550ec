/**
 * Property-based: the egress listener against generated clients — HTTP/1.1 heads (CONNECT with generated
 * authorities: the allowed destination, the decoy, names, huge and malformed ones; other methods and versions;
 * odd fields; truncated, pipelined and binary heads; bytes past the head) and HTTP/2 header blocks (classic and
 * extended CONNECT, other methods, noisy blocks, through node's client or raw frames), with an actor certificate,
 * one from another CA or none, while ext_proc answers with the policy, a denial, a broken allow, an error or
 * silence (the verdict cache on, its TTL short). The process lives on; every request gets a well-formed answer (or a reset, or its connection closes);
 * a tunnel opens only for an actor certificate, an allow from ext_proc and the allowed destination, and carries
 * its bytes; nothing connects to the decoy; no connection, tunnel, actor's place, grant or request stays behind.
 */
import { test } from 'node:test';
import fc from 'fast-check';
import { request } from 'undici';
import { expand } from '../testing/fuzz/arbitraries.js';
import { fuzzTarget } from '../testing/fuzz/fuzz-target.js';
import { sendH2 } from '../testing/fuzz/h2-client.js';
import { withDeadline } from '../testing/fuzz/run.js';
import { h1CaseArb, h2CaseArb, sendH1Case, startEgressStack, tunnelProblem, type EgressCase, type EgressStack } from '../testing/egress/egress-fuzz.js';

/** Waits until the proxy holds no egress connection, tunnel, actor's place or grant; the problem otherwise. */
async function egressSettled(stack: EgressStack): Promise<string[]> {
  const deadline = Date.now() + 10_000;
  let block = { connections: -1, open: -1, actors: -1, grants: { held: -1 } };
  while (Date.now() < deadline) {
    const stats = (await (await request(`${stack.proxy.admin}/stats`)).body.json()) as { egressTunnels: typeof block };
    block = stats.egressTunnels;
    if (block.connections === 0 && block.open === 0 && block.actors === 0 && block.grants.held === 0) return [];
    await new Promise((r) => setTimeout(r, 20));
  }
  return [`after the case: ${block.connections} egress connection(s), ${block.open} tunnel(s) open, ${block.actors} actor(s) holding places, ${block.grants.held} grant(s) held`];
}

test(
  'generated CONNECTs and HTTP/2 frames on the egress listener: the process lives, each answer is well-formed, tunnels open only where allowed',
  fuzzTarget<EgressStack, EgressCase>({
    file: import.meta.url,
    runs: 60,
    start: () => startEgressStack(),
    cases: (stack) => fc.oneof(h1CaseArb(stack.echo.address, stack.decoy.address), h2CaseArb(stack.echo.address, stack.decoy.address)),
    async send(c, { stack, n, count, settle }) {
      stack.mode = c.mode;
      const startedAt = Date.now();
      const problems: string[] = [];
      if (c.protocol === 'http/1.1') {
        const outcome = await withDeadline(sendH1Case(stack, c), 30_000, 'the HTTP/1.1 case');
        count(`h1 ${outcome.status ?? 'closed'}`);
        problems.push(...outcome.problems);
      } else {
        const streams = c.streams.map((s, i) => ({ ...s, id: `eg-${n}-${i}` }));
        const creds = stack.creds[c.creds];
        const outcomes = await withDeadline(
          sendH2({ address: `${stack.target.host}:${stack.target.port}`, tls: true, via: c.via, streams, deadlineMs: 10_000, clientCertificate: creds }),
          30_000,
          'the HTTP/2 connection',
        );
        for (const o of outcomes) {
          count(`h2 ${o.via} ${o.status ?? 'none'}`);
          if (!o.done) problems.push(`stream ${o.id} (${o.via}): no answer, reset or close within the deadline`);
          if (o.problem !== undefined) problems.push(`stream ${o.id} (${o.via}): ${o.problem}`);
          if (o.status === 200) {
            const s = streams.find((x) => x.id === o.id);
            const fields = s?.fields ?? [];
            const method = fields.find(([k]) => k === ':method')?.[1];
            const authority = fields.find(([k]) => k === ':authority')?.[1];
            const problem = method !== 'CONNECT' || authority === undefined ? 'a 200 to a stream that is not a CONNECT' : tunnelProblem(c, expand(authority), stack.echo.address, stack.allowedAt, startedAt);
            if (problem !== undefined) problems.push(`stream ${o.id}: ${problem}`);
          }
        }
      }
      problems.push(...(await egressSettled(stack)), ...(await settle()));
      return problems;
    },
  }),
);
