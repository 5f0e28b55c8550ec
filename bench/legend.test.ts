import { test } from 'node:test';
import assert from 'node:assert/strict';
import { armDescription, armLegend, legendMarkdown } from './legend.js';
import { ARMS } from './arms.js';

test('every arm the bench can run has a description for the legend; unknown names are left out', () => {
  for (const name of Object.keys(ARMS)) assert.ok((armDescription(name) ?? '').length > 10, name);
  assert.match(armDescription('target') ?? '', /already running proxy/);
  assert.deepEqual(armLegend(['C', 'side-by-side label', 'C', 'A']).map(([n]) => n), ['C', 'A']);
  assert.deepEqual(legendMarkdown(['nobody']), []);
  assert.deepEqual(legendMarkdown(['B1']), ['Arms:', '', '- `B1`: proxy resolves itself (no ext_proc), cache off', '']);
});
