import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import { callerBudgetMs } from './caller-budget.js';

const md = (...values: string[]): grpc.Metadata => {
  const m = new grpc.Metadata();
  for (const v of values) m.add('actor-edge-resume-budget-ms', v);
  return m;
};

test("the data plane's budget from the stream metadata: whole milliseconds up to an hour, else ignored", () => {
  const rows: [string, grpc.Metadata | undefined, number | undefined][] = [
    ['absent (Envoy)', new grpc.Metadata(), undefined],
    ['no metadata', undefined, undefined],
    ['a budget', md('2870'), 2870],
    ['none left', md('0'), 0],
    ['an hour', md('3600000'), 3_600_000],
    ['over an hour', md('3600001'), undefined],
    ['negative', md('-5'), undefined],
    ['a fraction', md('12.5'), undefined],
    ['not a number', md('soon'), undefined],
    ['empty', md(''), undefined],
    ['sent twice', md('100', '200'), undefined],
  ];
  for (const [name, metadata, want] of rows) assert.equal(callerBudgetMs(metadata), want, name);
});
