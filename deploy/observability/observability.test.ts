/**
 * The shipped Prometheus rules and Grafana dashboard: promtool accepts the rules and their unit tests pass
 * (skipped, with the reason, where promtool is not installed: Debian's `prometheus` package has it), and every
 * metric and label they name is one the components actually export (read from the components' own registries,
 * built as the processes build them), so a renamed metric cannot leave a silent dashboard or a dead alert.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { exportedMetrics } from '../../scripts/reference/registries.js';

/** The source folder (this file runs from dist/deploy/observability/). */
const DIR = fileURLToPath(new URL('../../../deploy/observability/', import.meta.url));

const promtool = spawnSync('promtool', ['--version'], { encoding: 'utf8' });
/** Why the promtool tests are skipped (never with REQUIRE_TEST_TOOLS=1, as in CI: a missing promtool fails them). */
const noPromtool =
  promtool.error === undefined || process.env.REQUIRE_TEST_TOOLS === '1' ? undefined : `promtool not found (${(promtool.error as NodeJS.ErrnoException).code}): install Debian's prometheus package`;

function runPromtool(args: string[]): { status: number | null; out: string } {
  const r = spawnSync('promtool', args, { cwd: DIR, encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

test('promtool check rules accepts alerts.yaml', { skip: noPromtool ?? false }, () => {
  const r = runPromtool(['check', 'rules', 'alerts.yaml']);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /SUCCESS: \d+ rules found/);
});

test('promtool test rules: the alerts fire on the series they are meant for, and not on the others', { skip: noPromtool ?? false }, () => {
  const r = runPromtool(['test', 'rules', 'alerts.test.yaml']);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /SUCCESS/);
});

interface Reference {
  readonly metric: string;
  readonly labels: readonly string[];
  readonly where: string;
}

/** The actor_edge_* series a PromQL expression selects, with the label names its matchers use. */
function references(expr: string, where: string): Reference[] {
  const out: Reference[] = [];
  for (const m of expr.matchAll(/\b(actor_edge_[a-z0-9_]+)(\{([^}]*)\})?/g)) {
    const labels = [...(m[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)].map((l) => l[1] as string);
    out.push({ metric: m[1] as string, labels, where });
  }
  return out;
}

function ruleExpressions(): { expr: string; where: string }[] {
  const doc = parse(readFileSync(`${DIR}alerts.yaml`, 'utf8')) as { groups: { name: string; rules: { alert?: string; expr: string }[] }[] };
  return doc.groups.flatMap((g) => g.rules.map((r) => ({ expr: r.expr, where: `alert ${r.alert}` })));
}

interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  datasource?: { uid?: string };
  targets?: { expr: string; refId: string }[];
}

function dashboard(): { uid: string; panels: Panel[]; templating: { list: { name: string; query?: unknown; definition?: string }[] } } {
  return JSON.parse(readFileSync(`${DIR}grafana-dashboard.json`, 'utf8'));
}

test('every metric and label the alerts and the dashboard name is exported by a component', async () => {
  const exported = await exportedMetrics();
  const d = dashboard();
  const exprs = [
    ...ruleExpressions(),
    ...d.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ expr: t.expr, where: `panel "${p.title}"` }))),
    ...d.templating.list.flatMap((v) => (v.definition === undefined ? [] : [{ expr: v.definition, where: `variable ${v.name}` }])),
  ];
  const refs = exprs.flatMap((e) => references(e.expr, e.where));
  assert.ok(refs.length > 40, `references found: ${refs.length}`);
  const seen = new Set<string>();
  for (const ref of refs) {
    const base = exported.has(ref.metric) ? ref.metric : ref.metric.replace(/_(bucket|sum|count)$/, '');
    assert.ok(exported.has(base), `${ref.where}: ${ref.metric} is not exported by any component`);
    seen.add(base);
    const known = new Set([...(exported.get(base) ?? []), 'job', 'instance', ...(ref.metric.endsWith('_bucket') ? ['le'] : [])]);
    for (const label of ref.labels) assert.ok(known.has(label), `${ref.where}: ${ref.metric} has no label "${label}"`);
  }
  // The headline metrics are all on the dashboard.
  for (const m of ['actor_edge_proxy_request_duration_seconds', 'actor_edge_proxy_extproc_round_trip_seconds', 'actor_edge_proxy_worker_errors_total', 'actor_edge_extproc_resume_calls_total', 'actor_edge_proxy_ready', 'actor_edge_proxy_build_info']) {
    assert.ok(seen.has(m), `${m} is used`);
  }
});

test('the dashboard is a well-formed Grafana dashboard: unique ids, every query on the datasource variable, panels inside 24 columns and not overlapping', () => {
  const d = dashboard();
  assert.equal(d.uid, 'actor-edge');
  assert.ok(d.templating.list.some((v) => v.name === 'datasource'));
  const ids = d.panels.map((p) => p.id);
  assert.equal(new Set(ids).size, ids.length, 'unique panel ids');
  const cells = new Map<string, string>();
  for (const p of d.panels) {
    const g = p.gridPos;
    assert.ok(g.x >= 0 && g.w > 0 && g.x + g.w <= 24 && g.h > 0, `${p.title}: inside the grid`);
    for (let x = g.x; x < g.x + g.w; x++) {
      for (let y = g.y; y < g.y + g.h; y++) {
        const other = cells.get(`${x},${y}`);
        assert.equal(other, undefined, `${p.title} overlaps ${other}`);
        cells.set(`${x},${y}`, p.title);
      }
    }
    if (p.type === 'row') continue;
    assert.equal(p.datasource?.uid, '${datasource}', `${p.title}: datasource variable`);
    assert.ok((p.targets ?? []).length > 0, `${p.title}: has queries`);
    const refIds = (p.targets ?? []).map((t) => t.refId);
    assert.equal(new Set(refIds).size, refIds.length, `${p.title}: unique refIds`);
  }
});
