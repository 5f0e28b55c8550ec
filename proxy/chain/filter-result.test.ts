import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONTINUE, reply } from '../api/filter.js';
import { filterResultProblem } from './filter-result.js';

const CASES: readonly { readonly result: unknown; readonly problem: RegExp | undefined }[] = [
  { result: CONTINUE, problem: undefined },
  { result: reply({ status: 403 }), problem: undefined },
  { result: { kind: 'continue' }, problem: undefined },
  { result: undefined, problem: /returned undefined/ },
  { result: null, problem: /returned null/ },
  { result: 42, problem: /returned 42/ },
  { result: 'continue', problem: /returned "continue"/ },
  { result: true, problem: /returned true/ },
  { result: {}, problem: /kind is undefined/ },
  { result: { kind: 'skip' }, problem: /kind is "skip"/ },
  { result: { kind: 'reply' }, problem: /without a numeric status/ },
  { result: { kind: 'reply', reply: { status: '403' } }, problem: /without a numeric status/ },
];

for (const { result, problem } of CASES) {
  test(`a filter result of ${JSON.stringify(result) ?? String(result)} is ${problem === undefined ? 'accepted' : 'refused'}`, () => {
    const found = filterResultProblem(result);
    if (problem === undefined) assert.equal(found, undefined);
    else assert.match(found ?? '', problem);
  });
}
