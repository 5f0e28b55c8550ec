/**
 * Checks of what a reader gets from a run's Markdown and chart (not its numbers: `report-checks.ts` does those):
 * every arm the run has is explained (a legend: what A, B1, C, floor… are), and every target is stated with its
 * verdict as `renderMarkdown` states it (measured value, what it is compared against, met / not met), never as a
 * bare mark. `check-report.ts` applies it to the `.md` and `.svg` a run wrote beside its report.
 */
import { escapeXml } from './chart.js';
import { armLegend } from './legend.js';
import { targetLine } from './report.js';
import type { BenchReport } from './types.js';

export function checkReportText(report: BenchReport, markdown: string, svg: string | undefined): string[] {
  const problems: string[] = [];
  const legend = armLegend(report.arms.map((a) => a.name));
  for (const [name, description] of legend) {
    if (!markdown.includes(`- \`${name}\`: ${description}`)) problems.push(`the Markdown does not say what arm ${name} is`);
    if (svg !== undefined && !svg.includes(`<tspan font-weight="bold">${escapeXml(name)}</tspan>: ${escapeXml(description)}`)) problems.push(`the chart does not say what arm ${name} is`);
  }
  for (const t of report.targets) {
    if (!markdown.includes(`- ${targetLine(t)}`)) problems.push(`the Markdown does not state target "${t.name}" with its verdict`);
  }
  if (/\[(NOT MET|met|n\/a|reported)\]/.test(markdown)) problems.push('the Markdown marks targets [met]/[NOT MET] instead of stating them');
  return problems;
}
