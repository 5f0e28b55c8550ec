/**
 * A hand-written SVG chart of one run: throughput per arm on the left, control-plane calls per 1,000 requests on
 * the right (log scale, because the cache arms make hundreds of times fewer calls), and below them a legend of the
 * arms (what A, B1, C, floor… are) when the arms carry a description. No dependency: plain strings.
 */

export interface ChartArm {
  readonly name: string;
  readonly rps: number;
  readonly resumeCallsPer1k: number | null;
  readonly extprocStreamsPer1k: number | null;
  /** What the arm is (`legend.ts`), for the legend under the panels. */
  readonly description?: string;
}

export interface ChartOptions {
  readonly title: string;
  readonly subtitle?: string;
}

interface Series {
  readonly label: string;
  readonly color: string;
}

interface Group {
  readonly label: string;
  readonly values: readonly (number | null)[];
}

interface Panel {
  readonly x: number;
  readonly y: number;
  readonly w: number;
  readonly h: number;
  readonly title: string;
  readonly scale: 'linear' | 'log';
  readonly series: readonly Series[];
  readonly groups: readonly Group[];
  readonly format: (v: number) => string;
}

const WIDTH = 960;
const HEIGHT = 420;
const FONT = 'font-family="Helvetica, Arial, sans-serif"';
const THROUGHPUT: Series = { label: 'requests per second', color: '#2b6cb0' };
const RESUME: Series = { label: 'ResumeActor calls / 1k requests', color: '#c05621' };
const STREAMS: Series = { label: 'ext_proc streams / 1k requests', color: '#6b46c1' };

export function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' })[c] as string);
}

/** A round upper bound for a linear axis: 1, 2 or 5 × 10^k at or above max. */
export function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const exp = Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) {
    const v = m * 10 ** exp;
    if (v >= max) return v;
  }
  return 10 ** (exp + 1);
}

/** Decades for a log axis covering [min, max] (values ≤ 0 are ignored), at least two. */
export function logDecades(values: readonly number[]): { lo: number; hi: number } {
  const pos = values.filter((v) => v > 0);
  if (pos.length === 0) return { lo: 0, hi: 1 };
  const lo = Math.floor(Math.log10(Math.min(...pos)));
  // A value a hair above a decade (1,000.4 calls per 1k requests) does not open a whole empty decade.
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(...pos)) - 0.01));
  return { lo, hi };
}

export function compactNumber(v: number): string {
  if (v >= 1e6) return `${(v / 1e6).toFixed(1)}M`;
  if (v >= 1e3) return `${(v / 1e3).toFixed(1)}k`;
  if (v >= 100) return Math.round(v).toLocaleString('en-US');
  if (Number.isInteger(v)) return String(v);
  if (v >= 1) return v.toFixed(1);
  if (v === 0) return '0';
  return v.toPrecision(2);
}

function text(x: number, y: number, body: string, attrs = ''): string {
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${FONT} ${attrs}>${escapeXml(body)}</text>`;
}

function panel(p: Panel): string {
  const out: string[] = [];
  const plotTop = p.y + 30;
  const plotH = p.h - 70;
  const plotBottom = plotTop + plotH;
  const left = p.x + 50;
  const plotW = p.w - 60;
  const values = p.groups.flatMap((g) => g.values.filter((v): v is number => v !== null));
  out.push(text(p.x + p.w / 2, p.y + 14, p.title, 'font-size="14" font-weight="bold" text-anchor="middle"'));
  let yOf: (v: number) => number;
  if (p.scale === 'linear') {
    const top = niceMax(Math.max(0, ...values));
    yOf = (v) => plotBottom - (Math.max(0, v) / top) * plotH;
    for (let i = 0; i <= 4; i++) {
      const v = (top * i) / 4;
      const y = yOf(v);
      out.push(`<line x1="${left}" y1="${y.toFixed(1)}" x2="${left + plotW}" y2="${y.toFixed(1)}" stroke="#e2e8f0"/>`);
      out.push(text(left - 6, y + 4, compactNumber(v), 'font-size="11" text-anchor="end" fill="#4a5568"'));
    }
  } else {
    const { lo, hi } = logDecades(values);
    const span = hi - lo;
    yOf = (v) => (v > 0 ? Math.max(plotTop, plotBottom - ((Math.log10(v) - lo) / span) * plotH) : plotBottom);
    for (let d = lo; d <= hi; d++) {
      const y = yOf(10 ** d);
      out.push(`<line x1="${left}" y1="${y.toFixed(1)}" x2="${left + plotW}" y2="${y.toFixed(1)}" stroke="#e2e8f0"/>`);
      out.push(text(left - 6, y + 4, compactNumber(10 ** d), 'font-size="11" text-anchor="end" fill="#4a5568"'));
    }
  }
  out.push(`<line x1="${left}" y1="${plotBottom}" x2="${left + plotW}" y2="${plotBottom}" stroke="#4a5568"/>`);
  const groupW = plotW / Math.max(1, p.groups.length);
  const barW = Math.min(48, (groupW * 0.7) / p.series.length);
  p.groups.forEach((g, gi) => {
    const gx = left + gi * groupW + (groupW - barW * p.series.length) / 2;
    g.values.forEach((v, si) => {
      const s = p.series[si];
      if (!s) return;
      const x = gx + si * barW;
      if (v === null) {
        out.push(text(x + barW / 2, plotBottom - 4, 'n/a', 'font-size="10" text-anchor="middle" fill="#a0aec0"'));
        return;
      }
      const y = yOf(v);
      const h = Math.max(0, plotBottom - y);
      out.push(`<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="${s.color}"><title>${escapeXml(`${g.label}: ${p.format(v)} ${s.label}`)}</title></rect>`);
      out.push(text(x + (barW - 2) / 2, y - 4, p.format(v), 'font-size="10" text-anchor="middle" fill="#1a202c"'));
    });
    out.push(text(left + gi * groupW + groupW / 2, plotBottom + 16, g.label, 'font-size="12" text-anchor="middle"'));
  });
  p.series.forEach((s, si) => {
    const lx = left + si * 200;
    const ly = plotBottom + 34;
    out.push(`<rect x="${lx}" y="${ly - 9}" width="10" height="10" fill="${s.color}"/>`);
    out.push(text(lx + 14, ly, s.label, 'font-size="11" fill="#2d3748"'));
  });
  return out.join('\n');
}

const LEGEND_LINE = 16;

/** One line per described arm, under the panels: the name in bold, then what it is. */
function legend(arms: readonly ChartArm[], top: number): string[] {
  const described = arms.filter((a) => a.description !== undefined);
  if (described.length === 0) return [];
  return [
    text(20, top, 'Arms', 'font-size="12" font-weight="bold" fill="#2d3748"'),
    ...described.map((a, i) => {
      const y = top + (i + 1) * LEGEND_LINE;
      return `<text x="20" y="${y.toFixed(1)}" ${FONT} font-size="11" fill="#2d3748"><tspan font-weight="bold">${escapeXml(a.name)}</tspan>: ${escapeXml(a.description as string)}</text>`;
    }),
  ];
}

/** Renders the chart for one run. Arms keep their order; missing counts are drawn as "n/a". */
export function renderChart(arms: readonly ChartArm[], opts: ChartOptions): string {
  const half = WIDTH / 2;
  const legendLines = legend(arms, HEIGHT + 8);
  const height = legendLines.length === 0 ? HEIGHT : HEIGHT + 8 + legendLines.length * LEGEND_LINE;
  const body = [
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    text(20, 26, opts.title, 'font-size="17" font-weight="bold"'),
    opts.subtitle ? text(20, 46, opts.subtitle, 'font-size="12" fill="#4a5568"') : '',
    panel({
      x: 10,
      y: 62,
      w: half - 20,
      h: HEIGHT - 72,
      title: 'Throughput (req/s, higher is better)',
      scale: 'linear',
      series: [THROUGHPUT],
      groups: arms.map((a) => ({ label: a.name, values: [a.rps] })),
      format: compactNumber,
    }),
    panel({
      x: half + 10,
      y: 62,
      w: half - 20,
      h: HEIGHT - 72,
      title: 'Control-plane calls per 1k requests (log, lower is better)',
      scale: 'log',
      series: [RESUME, STREAMS],
      groups: arms.map((a) => ({ label: a.name, values: [a.resumeCallsPer1k, a.extprocStreamsPer1k] })),
      format: compactNumber,
    }),
    ...legendLines,
  ];
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-label="${escapeXml(opts.title)}">`,
    `<title>${escapeXml(opts.title)}</title>`,
    ...body.filter((s) => s.length > 0),
    '</svg>',
    '',
  ].join('\n');
}
