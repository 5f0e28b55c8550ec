/**
 * docs/reference/metrics.md: every metric each component exports on its admin `/metrics`, with its type, labels
 * and help, read from the components' own registries (`registries.ts`).
 */
import { componentRegistries, type DeclaredMetric } from './registries.js';
import { cell, code, generatedNote, page, table } from './markdown.js';

/** prom-client's default process and Node.js metrics: standard names, not listed one by one. */
const STANDARD = /^(process_|nodejs_)/;

export async function metricsPage(): Promise<string> {
  const registries = await componentRegistries();
  const lines: string[] = [
    '# Metrics',
    '',
    generatedNote("the components' metric declarations (their prom-client registries)"),
    '',
    "Every component serves Prometheus text on its admin listener's `/metrics` (proxy `127.0.0.1:9901`, extproc",
    '`127.0.0.1:9902`, apiserver-stub `127.0.0.1:9903`), lifetime values. The naming scheme, the label values, the',
    'names earlier versions used and the shipped dashboard and alerts: [operating.md](../operating.md#metric-names).',
    "Each component also exports prom-client's standard `process_*` and `nodejs_*` metrics under their usual names.",
    'With `--workers N` the proxy\'s primary merges its processes\' metrics.',
    '',
  ];
  for (const component of ['proxy', 'extproc', 'apiserver-stub'] as const) {
    const own = registries.filter((r) => r.component === component);
    const byName = new Map<string, { metric: DeclaredMetric; variants: Set<string | undefined> }>();
    for (const r of own) {
      for (const m of r.metrics) {
        if (STANDARD.test(m.name)) continue;
        const seen = byName.get(m.name) ?? { metric: m, variants: new Set<string | undefined>() };
        seen.variants.add(r.variant);
        byName.set(m.name, seen);
      }
    }
    const variants = new Set(own.map((r) => r.variant));
    const rows = [...byName.values()]
      .sort((a, b) => a.metric.name.localeCompare(b.metric.name))
      .map(({ metric, variants: in_ }) => {
        const named = [...in_].filter((v): v is string => v !== undefined);
        const others = [...variants].filter((v): v is string => v !== undefined && !in_.has(v));
        const only = in_.size === variants.size ? '' : named.length > 0 ? ` (only with ${named.map(code).join(', ')})` : ` (not with ${others.map(code).join(', ')})`;
        const labels = metric.labelNames.length === 0 ? 'none' : metric.labelNames.map(code).join(', ');
        return [code(metric.name), metric.type, labels, cell(`${metric.help}${only}`)];
      });
    lines.push(`## ${component}`, '', ...table(['metric', 'type', 'labels', 'help'], rows), '');
  }
  return page(lines);
}
