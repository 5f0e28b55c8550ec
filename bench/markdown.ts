/** Markdown and number formatting shared by the benchmark's reports. */

export function fmt(n: number | null | undefined, digits = 2): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '–';
  return n.toFixed(digits);
}

export function fmtInt(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '–';
  return Math.round(n).toLocaleString('en-US');
}

export function pct(x: number): string {
  return `${(x * 100).toFixed(x < 0.1 ? 1 : 0)}%`;
}

export function mb(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(0);
}

export function row(cells: readonly string[]): string {
  return `| ${cells.join(' | ')} |`;
}

export function table(head: readonly string[], align: readonly ('l' | 'r')[], rows: readonly (readonly string[])[]): string {
  const sep = align.map((a) => (a === 'r' ? '---:' : '---'));
  return [row(head), row(sep), ...rows.map(row)].join('\n');
}

export function statusText(a: { readonly statusCounts: Readonly<Record<string, number>> }): string {
  return Object.entries(a.statusCounts)
    .map(([code, n]) => `${code}×${n}`)
    .join(' ');
}
