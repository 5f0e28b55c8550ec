/**
 * Each counter declared once: every metric a running proxy registers is declared (with its `/stats` value, or in
 * `METRICS_WITHOUT_STATS` with where its numbers are read instead), every declared metric is registered with its
 * labels, and every declaration's path is in the `/stats` document.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startTestProxy, type InProcessTestProxy } from '../testing/proxy.js';
import { getJson, routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from '../testing/helpers.js';
import { actorHost } from '../../lib/testing/actors.js';
import { declarations, type DeclarationTree } from '../../lib/stats/declare.js';
import { exportedMetrics } from '../../lib/stats/derive.js';
import { PROXY_STATS } from '../ops/stats.js';
import { METRICS_WITHOUT_STATS, PROXY_METRIC_PREFIX } from '../ops/metrics.js';
import { CACHE_ON_STATS } from '../stages/actor-cache/stats.js';
import { OFFLOAD_STATS } from '../chain/offload/offload-stats.js';
import { OVERLOAD_STATS } from '../ops/overload/stats.js';
import { TUNNEL_STATS } from '../ops/tunnel-stats.js';
import { EGRESS_STATS } from '../egress/egress-stats.js';
import { EGRESS_CACHE_STATS } from '../egress/egress-cache-stats.js';
import { egressPki, type EgressPki } from '../egress/testing/egress-pki.js';

/** The declaration trees of the proxy (each rooted at the `/stats` document). */
const TREES: readonly DeclarationTree<never>[] = [PROXY_STATS, CACHE_ON_STATS, OFFLOAD_STATS, OVERLOAD_STATS, TUNNEL_STATS, EGRESS_CACHE_STATS, EGRESS_STATS];

/**
 * Metrics still registered directly, not yet declared with their `/stats` value (this list only shrinks: a family
 * that is declared leaves it, and the last test fails until it does).
 */
const NOT_YET_DECLARED = new Set(
  [
    'ready',
    'resolver_health_checks_total',
    'resolver_resume_calls_total',
    'tls_certificate_expiry_seconds',
  ].map((n) => `${PROXY_METRIC_PREFIX}${n}`),
);

let ep: ScriptedExtProc;
let up: Upstream;
let proxy: InProcessTestProxy;
let pki: EgressPki;

before(async () => {
  up = await startUpstream((_req, res) => res.end('ok'));
  ep = await startScriptedExtProc(() => routeTo(up.address));
  pki = await egressPki();
  // With the egress listener, so that its metrics and its /stats block are covered too.
  const egress = ['--egress-listen', '127.0.0.1:0', '--egress-tls-cert', pki.server.certFile, '--egress-tls-key', pki.server.keyFile, '--egress-client-ca', pki.actorCaFile];
  proxy = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'on', '--access-log', 'off', '--extproc', ep.address, ...egress] });
  const res = await request(`${proxy.ingress}/`, { headers: { host: actorHost('a') } });
  await res.body.text();
});

after(async () => {
  await proxy.stop();
  await ep.close();
  await up.close();
  await pki.close();
});

/** `name → type` of every metric in Prometheus text (its `# TYPE` lines: a metric with no sample yet included). */
function registered(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]));
}

/** The label names of `name`'s samples in Prometheus text. */
function labelNames(text: string, name: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(new RegExp(`^${name}\\{([^}]*)\\}`, 'gm'))) for (const l of (m[1] as string).matchAll(/(\w+)="/g)) out.add(l[1] as string);
  return out;
}

const declared = TREES.flatMap((t) => exportedMetrics(PROXY_METRIC_PREFIX, t));

test('every metric the proxy registers is declared, with its /stats value or with where it is read instead', async () => {
  const text = await (await request(`${proxy.admin}/metrics`)).body.text();
  const names = new Set(declared.map((m) => m.name));
  const undeclared = [...registered(text).keys()].filter(
    (n) => n.startsWith(PROXY_METRIC_PREFIX) && !names.has(n) && !(n in METRICS_WITHOUT_STATS) && !NOT_YET_DECLARED.has(n),
  );
  assert.deepEqual(undeclared, [], 'metrics registered without a declaration');
});

test('every declared metric is registered, as its kind, with its labels', async () => {
  const text = await (await request(`${proxy.admin}/metrics`)).body.text();
  const types = registered(text);
  assert.ok(declared.length >= 30, `the proxy's and the cache's declarations: ${declared.length}`);
  for (const m of declared) {
    assert.equal(types.get(m.name), m.kind, `${m.name} (${m.paths.join(', ')}) is exported as a ${m.kind}`);
    const seen = labelNames(text, m.name);
    for (const l of seen) assert.ok(m.labelNames.includes(l), `${m.name}: label ${l} is declared`);
  }
  for (const name of Object.keys(METRICS_WITHOUT_STATS)) assert.ok(types.has(name), `${name} is registered`);
});

test('every declaration is in /stats at its path', async () => {
  const doc = (await getJson(`${proxy.admin}/stats`)) as unknown;
  const paths = TREES.flatMap((t) => declarations(t).map((d) => d.path));
  assert.ok(paths.length >= 50, `declarations: ${paths.length}`);
  for (const path of paths) {
    let at: unknown = doc;
    for (const key of path) at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined;
    assert.notEqual(at, undefined, `/stats ${path.join('.')}`);
  }
});

test('the list of metrics not yet declared holds none that is', () => {
  const both = declared.filter((m) => NOT_YET_DECLARED.has(m.name) || m.name in METRICS_WITHOUT_STATS).map((m) => m.name);
  assert.deepEqual(both, []);
});
