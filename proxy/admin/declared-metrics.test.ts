/**
 * Each counter declared once: every metric a running proxy registers is declared (with its `/stats` value, or in
 * `METRICS_WITHOUT_STATS` with where its numbers are read instead), every declared metric is registered with its
 * labels, and every declaration's path is in the `/stats` document. Two proxies between them register every metric:
 * one with the actor cache, the egress listener and a TLS listener, one with `--resolver apiserver`.
 */
import { after, before, describe, test } from 'node:test';
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
import { RESOLVER_STATS } from '../stages/resolver-stats.js';
import { egressPki, type EgressPki } from '../egress/testing/egress-pki.js';

/** The declaration trees of the proxy (each rooted at the `/stats` document). */
const TREES: readonly DeclarationTree<never>[] = [
  PROXY_STATS,
  CACHE_ON_STATS,
  RESOLVER_STATS,
  OFFLOAD_STATS,
  OVERLOAD_STATS,
  TUNNEL_STATS,
  EGRESS_CACHE_STATS,
  EGRESS_STATS,
];

let ep: ScriptedExtProc;
let up: Upstream;
let proxy: InProcessTestProxy;
let apiserverProxy: InProcessTestProxy;
let pki: EgressPki;

describe('declared-metrics', () => {
  before(async () => {
    up = await startUpstream((_req, res) => res.end('ok'));
    ep = await startScriptedExtProc(() => routeTo(up.address));
    pki = await egressPki();
    // With the egress listener, so that its metrics and its /stats block are covered too; with a TLS listener, so
    // that a certificate's expiry is watched.
    const egress = ['--egress-listen', '127.0.0.1:0', '--egress-tls-cert', pki.server.certFile, '--egress-tls-key', pki.server.keyFile, '--egress-client-ca', pki.actorCaFile];
    const tls = ['--tls-listen', '127.0.0.1:0', '--tls-cert', pki.server.certFile, '--tls-key', pki.server.keyFile];
    proxy = await startTestProxy({ mode: 'in-process', args: ['--actor-cache', 'on', '--access-log', 'off', '--extproc', ep.address, ...egress, ...tls] });
    // The proxy's own ResumeActor calls are counted only with --resolver apiserver (no call is made here).
    apiserverProxy = await startTestProxy({ mode: 'in-process', args: ['--access-log', 'off', '--resolver', 'apiserver', '--apiserver', '127.0.0.1:1'] });
    const res = await request(`${proxy.ingress}/`, { headers: { host: actorHost('a') } });
    await res.body.text();
  });

  after(async () => {
    await proxy.stop();
    await apiserverProxy.stop();
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

  /** Both proxies' Prometheus text. */
  async function metricsText(): Promise<string> {
    const texts = await Promise.all([proxy, apiserverProxy].map(async (p) => (await request(`${p.admin}/metrics`)).body.text()));
    return texts.join('\n');
  }

  test('every metric the proxy registers is declared, with its /stats value or with where it is read instead', async () => {
    const text = await metricsText();
    const names = new Set(declared.map((m) => m.name));
    const undeclared = [...registered(text).keys()].filter((n) => n.startsWith(PROXY_METRIC_PREFIX) && !names.has(n) && !(n in METRICS_WITHOUT_STATS));
    assert.deepEqual(undeclared, [], 'metrics registered without a declaration');
  });

  test('every declared metric is registered, as its kind, with its labels', async () => {
    const text = await metricsText();
    const types = registered(text);
    assert.ok(declared.length >= 80, `the proxy's declarations: ${declared.length}`);
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
    assert.ok(paths.length >= 130, `declarations: ${paths.length}`);
    for (const path of paths) {
      let at: unknown = doc;
      for (const key of path) at = at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[key] : undefined;
      assert.notEqual(at, undefined, `/stats ${path.join('.')}`);
    }
  });

  test('a metric listed without a /stats value is not also declared', () => {
    const both = declared.filter((m) => m.name in METRICS_WITHOUT_STATS).map((m) => m.name);
    assert.deepEqual(both, []);
  });
});
