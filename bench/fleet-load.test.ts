import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyTally, OwnerWatch, tallyDiff } from './fleet-load.js';

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
