import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { planProblems } from './plan-check.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const COMPOSE = readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8');

type Doc = { services: Record<string, { command: string[]; environment: Record<string, string>; depends_on: Record<string, unknown> }> };

/** compose.yaml with one change. */
function changed(edit: (doc: Doc) => void): string {
  const doc = parse(COMPOSE, { merge: true }) as Doc;
  edit(doc);
  return stringify(doc);
}

test('compose.yaml follows the stack plan: its components, their wiring, start order, mTLS variables and identities', () => {
  assert.deepEqual(planProblems(COMPOSE), []);
});

test('the check catches a drift in each of them', () => {
  const cases: [string, (doc: Doc) => void, RegExp][] = [
    ['extproc wired elsewhere', (d) => void (d.services.extproc!.command[d.services.extproc!.command.indexOf('--apiserver') + 1] = 'elsewhere:50052'), /extproc: --apiserver elsewhere:50052 is not a name of apiserver/],
    ['the proxy without ext_proc', (d) => void d.services.proxy!.command.splice(d.services.proxy!.command.indexOf('--extproc'), 2), /proxy: no --extproc/],
    ['a lost start order', (d) => void delete d.services.proxy!.depends_on.extproc, /proxy: starts without waiting for extproc/],
    ['a hop without its TLS variable', (d) => void delete d.services.extproc!.environment.EXTPROC_TLS_CLIENT_CA, /extproc: EXTPROC_TLS_CLIENT_CA missing/],
    ['a wrong identity', (d) => void (d.services.proxy!.environment.PROXY_EXTPROC_SPIFFE_ID = 'spiffe://cluster.local/ns/actor-edge/sa/other'), /proxy: PROXY_EXTPROC_SPIFFE_ID is .*other/],
    ['a worker without mTLS', (d) => void delete d.services['worker-2']!.environment.WORKER_TLS_CLIENT_IDENTITY, /worker-2: WORKER_TLS_CLIENT_IDENTITY missing/],
    ['a component gone', (d) => void delete d.services.extproc, /extproc: no service runs it/],
  ];
  for (const [name, edit, expected] of cases) {
    const problems = planProblems(changed(edit));
    assert.ok(problems.some((p) => expected.test(p)), `${name}: ${JSON.stringify(problems)}`);
  }
});
