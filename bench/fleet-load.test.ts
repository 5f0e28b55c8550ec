import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyTally, FleetLoad, OwnerWatch, tallyDiff, type Answer, type Request, type Transport } from './fleet-load.js';

/** An OwnerWatch on a clock the test moves. */
function watch(): { w: OwnerWatch; tick: (ms: number) => void } {
  let now = 0;
  return { w: new OwnerWatch(1000, 3, () => now), tick: (ms) => (now += ms) };
}

function serve(w: OwnerWatch, actor: string, replica: string, times: number): void {
  for (let i = 0; i < times; i++) w.served(actor, replica);
}

test('OwnerWatch: an actor moves when most answers of a second come from another replica than at begin()', () => {
  const { w, tick } = watch();
  serve(w, 'a', 'r1', 5);
  serve(w, 'b', 'r2', 5);
  tick(1000);
  w.begin();
  assert.deepEqual([...w.owners()], [['a', 'r1'], ['b', 'r2']]);
  // One answer from elsewhere (HAProxy's load bound) in a second otherwise served by the owner: no move.
  serve(w, 'a', 'r1', 4);
  serve(w, 'a', 'r3', 1);
  // b is served by r3 for a whole second: a move, even if it returns to r2 afterwards.
  serve(w, 'b', 'r3', 4);
  tick(1000);
  serve(w, 'b', 'r2', 5);
  tick(1000);
  assert.equal(w.moved(), 1);
  assert.equal(w.owners().get('b'), 'r2');
  // begin() again: the count starts over.
  w.begin();
  assert.equal(w.moved(), 0);
});

test('OwnerWatch: a second with too few answers, or no majority, decides nothing; an actor unknown at begin() never counts', () => {
  const { w, tick } = watch();
  serve(w, 'a', 'r1', 3);
  tick(1000);
  w.begin();
  serve(w, 'a', 'r2', 2); // fewer than 3 answers
  tick(1000);
  serve(w, 'a', 'r2', 2);
  serve(w, 'a', 'r1', 2); // a tie is no majority
  tick(1000);
  serve(w, 'new', 'r2', 5);
  tick(1000);
  assert.equal(w.moved(), 0);
  assert.equal(w.owners().get('a'), 'r1');
});

test('tallyDiff: what happened between two snapshots, by method and status', () => {
  const before = emptyTally();
  before.GET.requests = 10;
  before.GET.ok = 10;
  before.statusCounts['200'] = 10;
  before.errorSamples.push('old');
  const after = structuredClone(before);
  after.GET.requests = 15;
  after.GET.ok = 14;
  after.GET.non2xx = 1;
  after.POST.requests = 3;
  after.POST.errors = 1;
  after.POST.ok = 2;
  after.statusCounts['200'] = 26;
  after.statusCounts['502'] = 1;
  after.coalesced = 4;
  after.misdirected = 4;
  after.errorSamples.push('POST: other side closed');
  assert.deepEqual(tallyDiff(after, before), {
    GET: { requests: 5, ok: 4, non2xx: 1, errors: 0 },
    POST: { requests: 3, ok: 2, non2xx: 0, errors: 1 },
    statusCounts: { '200': 16, '502': 1 },
    coalesced: 4,
    misdirected: 4,
    errorSamples: ['POST: other side closed'],
  });
});

test('FleetLoad sni: a coalesced request is counted with its first answer, so a snapshot never holds one still in flight', async () => {
  const gate: { release?: () => void } = {};
  let coalescedSends = 0;
  const transport: Transport = {
    // Actor i's own connection is i; a request on another's is held until the test releases it, then answered 421.
    async send(req: Request, via: number): Promise<Answer> {
      const own = hosts.indexOf(req.host);
      if (via !== own) {
        coalescedSends++;
        await new Promise<void>((resolve) => (gate.release = resolve));
        return { status: 421, replica: undefined };
      }
      await new Promise((resolve) => setImmediate(resolve));
      return { status: 200, replica: undefined };
    },
    close: async () => undefined,
  };
  const actors = ['a0', 'a1', 'a2'];
  const hosts = actors.map((a) => `${a}.demo.example`);
  const load = new FleetLoad(
    { url: 'https://127.0.0.1:1', actors, hosts, connections: 1, postShare: 0, seed: 3, idPrefix: 't', replicaHeader: 'x-r', sni: { ca: Buffer.alloc(0), coalesceShare: 1 } },
    transport,
  );
  /** Waits for a held coalesced request and hands back its release. */
  const held = async (): Promise<() => void> => {
    for (;;) {
      const release = gate.release;
      if (release !== undefined) {
        delete gate.release;
        return release;
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  load.start();
  const first = await held();
  const inFlight = load.snapshot();
  assert.equal(coalescedSends, 1);
  assert.equal(inFlight.coalesced, 0, 'a coalesced request without its answer is not counted yet');
  assert.equal(inFlight.misdirected, 0);
  first();
  while (load.snapshot().GET.ok === 0) await new Promise((resolve) => setImmediate(resolve));
  const answered = load.snapshot();
  assert.equal(answered.coalesced, 1);
  assert.equal(answered.misdirected, 1);
  assert.equal(answered.GET.non2xx, 0);
  const stopping = load.stop();
  (await held())();
  await stopping;
  const last = load.snapshot();
  assert.equal(last.coalesced, last.misdirected, 'every coalesced request answered 421');
});
