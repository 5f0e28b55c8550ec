/**
 * End to end, a real proxy (in the test's process) configured by a YAML config file: every filter phase. The
 * request phase rewrites the path (the original stays readable) and reads the body (still forwarded; 413 beyond
 * the limit); the response phase changes status and headers or replaces the answer, for upstream answers and for
 * local replies and catalog errors alike (the error-pages example brands them, the CORS example answers preflights
 * and adds its headers); a hanging filter fails its own request with 504 after --filter-timeout-ms.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { actorHost } from '../../lib/testing/actors.js';
import { waitFor } from '../../lib/testing/wait.js';
import { accessLines, startEdgeStack, type EdgeStack } from '../testing/edge-harness.js';
import { fixture } from '../testing/helpers.js';

const HOST = actorHost('phases');
const APP = 'https://app.example';
const example = (name: string): string => fileURLToPath(new URL(`../../examples/${name}.js`, import.meta.url));

let stack: EdgeStack;
let dir: string;

describe('every filter phase, from a config file', () => {
  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'filter-phases-'));
    const file = path.join(dir, 'actor-edge.yaml');
    writeFileSync(
      file,
      [
        'filter-timeout-ms: 300',
        'filters:',
        `  - module: ${JSON.stringify(example('error-pages'))}`,
        '    options: { site: E2E Cloud }',
        `  - module: ${JSON.stringify(example('cors'))}`,
        `    options: { origins: [${APP}], methods: [GET, POST] }`,
        `  - module: ${JSON.stringify(fixture('phases'))}`,
        '    options: { tag: e2e, bodyLimit: 16 }',
        '',
      ].join('\n'),
    );
    stack = await startEdgeStack(['--config', file]);
  });

  after(async () => {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function send(pathAndQuery: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
    const res = await request(`http://${stack.ingress}${pathAndQuery}`, {
      method: (opts.method ?? 'GET') as 'GET',
      headers: { host: HOST, ...opts.headers },
      ...(opts.body !== undefined ? { body: opts.body } : {}),
    });
    const text = await res.body.text();
    return { status: res.statusCode, headers: res.headers, text };
  }

  test('request phase: a filter rewrites the upstream path; the original stays readable', async () => {
    const res = await send('/rewrite/a?x=1');
    assert.equal(res.status, 200);
    assert.equal(JSON.parse(res.text).path, '/rewritten?x=1');
    assert.equal(res.headers['x-phase-tag'], 'e2e', 'the response phase ran on the upstream answer');
    const bad = await send('/bad-path');
    assert.equal(bad.status, 500, 'a path that is not origin-form is refused (the filter fails)');
    assert.match(String(bad.headers['content-type']), /text\/html/, 'and the error page is branded');
  });

  test('request phase: a filter reads the body, which is still forwarded; over the limit → 413', async () => {
    const ok = await send('/body', { method: 'POST', body: '0123456789' });
    assert.equal(ok.status, 200);
    assert.equal(JSON.parse(ok.text).bodyLength, 10);
    const big = await send('/body', { method: 'POST', body: 'x'.repeat(40) });
    assert.equal(big.status, 413);
    assert.match(big.text, /413 Request too large/);
    await waitFor(() => accessLines(stack).some((l) => l.path === '/body' && l.error === 'PROXY_ERR_BODY_TOO_LARGE'), 3000, 'the access log names the catalog code');
  });

  test('response phase: status and headers change, or a local reply replaces the upstream answer', async () => {
    const created = await send('/created');
    assert.equal(created.status, 201);
    assert.equal(created.headers['x-phase-tag'], 'e2e');
    const replaced = await send('/replace');
    assert.equal(replaced.status, 299);
    assert.equal(replaced.headers['x-replaced'], 'yes');
    assert.equal(replaced.text, 'replaced\n');
    const hop = await send('/bad-header');
    assert.equal(hop.status, 500, 'a hop-by-hop response header is refused: the filter fails its request');
  });

  test('response phase on local replies: CORS preflights are answered locally, error pages are branded', async () => {
    const arrivals = stack.upstream.arrivals.length;
    const preflight = await send('/api', { method: 'OPTIONS', headers: { origin: APP, 'access-control-request-method': 'POST' } });
    assert.equal(preflight.status, 204);
    assert.equal(preflight.headers['access-control-allow-origin'], APP);
    assert.equal(stack.upstream.arrivals.length, arrivals, 'the preflight never reached the actor');
    const simple = await send('/api', { headers: { origin: APP } });
    assert.equal(simple.status, 200);
    assert.equal(simple.headers['access-control-allow-origin'], APP);
    const denied = await send('/deny', { headers: { origin: APP } });
    assert.equal(denied.status, 403);
    assert.match(String(denied.headers['content-type']), /text\/html/);
    assert.match(denied.text, /E2E Cloud/);
    assert.equal(denied.headers['access-control-allow-origin'], APP, 'filters before the one that answered see its reply');
    assert.equal(denied.headers['x-phase-tag'], undefined, 'the filter that answered does not see its own reply');
  });

  test('a filter that never settles fails its own request with 504 after --filter-timeout-ms, logged with its name', async () => {
    const hung = await send('/hang');
    assert.equal(hung.status, 504);
    assert.match(hung.text, /504 Gateway timeout/, 'the catalog error went through the response phase');
    const next = await send('/created');
    assert.equal(next.status, 201, 'the next request is unaffected');
    await waitFor(() => stack.proxy.logs().some((l) => l.filter === 'phases' && l.msg === 'filter timed out'), 3000, 'the timeout logged with the filter name');
    await waitFor(() => accessLines(stack).some((l) => l.path === '/hang' && l.error === 'PROXY_ERR_FILTER_TIMEOUT'), 3000, 'the access log names the catalog code');
  });
});
