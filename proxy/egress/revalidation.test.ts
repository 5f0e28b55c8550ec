/**
 * Re-validation with the verdict cache off (`--egress-cache off`): the egress listener alone with a scripted
 * ext_proc. Every allow is a lease of `--egress-cache-ttl-ms`; the tunnels it opened are re-validated within it, one
 * ext_proc stream per certificate and destination (not per tunnel), so revocation works without the cache too; and
 * a CONNECT whose grant ends before its tunnel opens is refused (one decided on its traffic, whose 200 is sent: closed).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ClientHttp2Stream } from 'node:http2';
import { waitFor } from '../../lib/testing/wait.js';
import { DecisionTallies, uncachedDecider } from './egress-decider.js';
import { h1Connect, h2Connect, h2Session, readBytes, startEcho, type Destination } from './testing/egress-clients.js';
import { egressPki, type ClientCredentials, type EgressPki } from './testing/egress-pki.js';
import { allowAnswer, outcomeAnswer, startEgressRig } from '../testing/egress/egress-rig.js';
import type { ProcessingResponse } from '../stages/ext-proc/messages.js';

const TTL_MS = 300;

let pki: EgressPki;
let actor: ClientCredentials;
let echo: Destination;

describe('revalidation', () => {
  before(async () => {
    pki = await egressPki();
    actor = await pki.actor('team', 'a');
    echo = await startEcho();
  });

  after(async () => {
    await echo.close();
    await pki.close();
  });

  test('cache off: the open tunnels of one key are re-validated on the TTL, one stream for all of them, and closed when the answer turns to a denial', async () => {
    let answer: ProcessingResponse = allowAnswer();
    const rig = await startEgressRig({ script: () => answer, decider: uncachedDecider(new DecisionTallies(), { ttlMs: TTL_MS }) });
    const session = await h2Session(rig.target, actor);
    try {
      const streams: ClientHttp2Stream[] = [];
      for (let i = 0; i < 4; i++) {
        const opened = await h2Connect(session, echo.address);
        assert.equal(opened.status, 200);
        streams.push(opened.stream);
      }
      const h1 = await h1Connect(rig.target, actor, echo.address);
      assert.equal(h1.status, 200);
      let closed = 0;
      for (const s of [...streams, h1.socket]) s.once('close', () => (closed += 1));
      const asked = rig.extproc.streams;
      await waitFor(() => rig.listener.stats.snapshot().grants.revalidations.renewed >= 2, 10_000, 'two renewals');
      const renewed = rig.listener.stats.snapshot().grants.revalidations.renewed;
      assert.ok(rig.extproc.streams - asked <= renewed + 1, `${rig.extproc.streams - asked} streams for ${renewed} renewals of one key holding five tunnels`);
      assert.equal(rig.listener.stats.snapshot().grants.held, 1);
      assert.equal(closed, 0);

      answer = outcomeAnswer('denied');
      await waitFor(() => closed === 5, 10_000, 'the five tunnels closed');
      const snapshot = rig.listener.stats.snapshot();
      assert.equal(snapshot.closed['revoked-denied'], 5);
      assert.equal(snapshot.grants.held, 0);
      await waitFor(() => rig.lines.filter((l) => l.tunnel !== null).length === 5, 10_000, 'their lines');
      assert.deepEqual([...new Set(rig.lines.filter((l) => l.tunnel !== null).map((l) => (l.tunnel as { closedBy: string }).closedBy))], ['revoked-denied']);
    } finally {
      session.destroy();
      await rig.close();
    }
  });

  test('a CONNECT whose grant ends while its destination is dialled is refused as the end says, and opens nothing', async () => {
    const allow = { kind: 'allow', actorId: 'uid-1', atespace: 'team', name: 'a', rule: 0 } as const;
    let revoke = (): void => undefined;
    const rig = await startEgressRig({
      decider: {
        ttlMs: TTL_MS,
        async decide() {
          // A revoke lands after the CONNECT joined its grant (a few microtasks on) and before the dial's connect event.
          let p = Promise.resolve();
          for (let i = 0; i < 20; i++) p = p.then(() => undefined);
          void p.then(() => revoke());
          return { verdict: allow, cache: 'hit', lease: { origin: 0, generation: 7, expiresAtMs: Date.now() + TTL_MS } };
        },
        revalidate: () => Promise.reject(new Error('not reached')),
      },
    });
    revoke = () => void rig.listener.grants.revoke({ atespace: 'team', name: 'a' }, 'revoked-admin');
    try {
      const answer = await h1Connect(rig.target, actor, echo.address);
      assert.deepEqual([answer.status, answer.body], [403, 'egress denied']);
      const line = rig.lines.at(-1) ?? {};
      assert.deepEqual([line.outcome, line.detail, line.tunnel], ['denied', 'grant ended before the tunnel opened: revoked-admin', null]);
      const snapshot = rig.listener.stats.snapshot();
      assert.deepEqual([snapshot.opened, snapshot.open, snapshot.actors, snapshot.grants.held], [0, 0, 0, 0]);
    } finally {
      await rig.close();
    }
  });

  for (const when of ['read', 'dialled'] as const) {
    test(`a CONNECT decided on its traffic whose name a fresher verdict drops while its first bytes are ${when}: closed, never opened`, async () => {
      const rules = (hostname: string) => ({ kind: 'hostnames', actorId: 'uid-1', atespace: 'team', name: 'a', rules: [{ rule: 0, hostnames: [hostname] }] }) as const;
      const rig = await startEgressRig({
        decider: {
          ttlMs: TTL_MS,
          decide: async () => ({ verdict: rules('api.example.test'), cache: 'hit', lease: { origin: 0, generation: 7, expiresAtMs: Date.now() + TTL_MS } }),
          revalidate: () => Promise.reject(new Error('not reached')),
        },
      });
      const grants = rig.listener.grants;
      const hold = grants.hold.bind(grants);
      // The policy's rule for the name changes once the CONNECT has joined its grant (at its 200), or once its name was
      // allowed (before the dial's connect event).
      grants.hold = (key, ...rest) => {
        const held = hold(key, ...rest);
        const change = (): void => grants.verdict(key, rules('www.example.test'), undefined);
        if (when === 'read') queueMicrotask(change);
        else {
          const allowFor = held.allowFor.bind(held);
          held.allowFor = (name) => {
            allowFor(name);
            queueMicrotask(change);
          };
        }
        return held;
      };
      const dialled = echo.accepted.length;
      try {
        const answer = await h1Connect(rig.target, actor, echo.address);
        assert.equal(answer.status, 200, 'decided on the traffic: 200 first');
        answer.socket.write('GET / HTTP/1.1\r\nHost: api.example.test\r\n\r\n');
        assert.equal(await readBytes(answer.socket, 1), '', 'closed without a byte from the destination');
        await waitFor(() => rig.lines.length === 1, 10_000, 'its line');
        const line = rig.lines[0] ?? {};
        assert.deepEqual(
          [line.outcome, line.status, line.hostname, line.detail, line.tunnel],
          ['denied', 200, 'api.example.test', 'grant ended before the tunnel opened: revoked-denied', null],
        );
        const snapshot = rig.listener.stats.snapshot();
        assert.deepEqual([snapshot.opened, snapshot.open, snapshot.actors, snapshot.grants.held], [0, 0, 0, 0]);
        if (when === 'read') assert.equal(echo.accepted.length, dialled, 'refused before the dial: nothing dialled');
      } finally {
        await rig.close();
      }
    });
  }
});
