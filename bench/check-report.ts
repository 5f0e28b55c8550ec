#!/usr/bin/env node
/**
 * `node dist/bench/check-report.js <scenario> <report.json | out-dir>`: applies the benchmark's end-to-end checks
 * (`report-checks.ts`) to the report a run wrote. Given a directory (a run's `--out-dir`), it takes the one
 * `<stamp>-<scenario>.json` there and also checks that the run wrote its `.md` (and, but for side-by-side, its
 * `.svg`) beside it, and that those explain every arm and state every target with its verdict
 * (`report-text-checks.ts`). Exit status: 0 when every check passes; 1 with the problems on stderr; 2 for bad arguments.
 * `.ci/run` runs it after each benchmark run.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CHECKED_SCENARIOS, checkReport, isCheckedScenario, type CheckedScenario } from './report-checks.js';
import { checkReportText } from './report-text-checks.js';
import type { BenchReport } from './types.js';

const USAGE = `usage: check-report.js <${CHECKED_SCENARIOS.join('|')}> <report.json | out-dir>\n`;

/** The report file to read, and the problems with the files a run wrote (when given its directory). */
export function locateReport(scenario: CheckedScenario, target: string): { file?: string; problems: string[]; siblings?: { md?: string; svg?: string } } {
  if (!statSync(target).isDirectory()) return { file: target, problems: [] };
  const names = readdirSync(target);
  const json = names.filter((f) => f.endsWith(`-${scenario}.json`));
  if (json.length !== 1) return { problems: [`${target}: ${json.length} ${scenario} reports (${json.join(', ') || 'none'}), want 1`] };
  const file = json[0] as string;
  const stem = file.slice(0, -'.json'.length);
  const siblings = scenario === 'side-by-side' ? ['.md'] : ['.md', '.svg'];
  const problems = siblings.filter((ext) => !names.includes(stem + ext)).map((ext) => `${target}: the run wrote no ${stem}${ext}`);
  const at = (ext: string): { md?: string; svg?: string } => (names.includes(stem + ext) ? { [ext.slice(1)]: path.join(target, stem + ext) } : {});
  return { file: path.join(target, file), problems, siblings: scenario === 'side-by-side' ? {} : { ...at('.md'), ...at('.svg') } };
}

export function main(argv: readonly string[]): number {
  const [scenario, target] = argv;
  if (argv.length !== 2 || scenario === undefined || target === undefined || !isCheckedScenario(scenario)) {
    process.stderr.write(USAGE);
    return 2;
  }
  let problems: string[];
  let file: string | undefined;
  try {
    let siblings: { md?: string; svg?: string } | undefined;
    ({ file, problems, siblings } = locateReport(scenario, target));
    if (file !== undefined) {
      const report = JSON.parse(readFileSync(file, 'utf8')) as unknown;
      problems.push(...checkReport(scenario, report));
      // The reader's view: checked once the numbers are (a report that fails those may not render at all).
      if (problems.length === 0 && siblings?.md !== undefined) {
        const svg = siblings.svg === undefined ? undefined : readFileSync(siblings.svg, 'utf8');
        problems.push(...checkReportText(report as BenchReport, readFileSync(siblings.md, 'utf8'), svg));
      }
    }
  } catch (err) {
    problems = [`${target}: ${(err as Error).message}`];
  }
  if (problems.length > 0) {
    process.stderr.write(`check-report: ${scenario}: ${problems.length} problem(s)\n${problems.map((x) => `  - ${x}\n`).join('')}`);
    return 1;
  }
  process.stdout.write(`check-report: ${scenario}: ${file ?? target} passes every check\n`);
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) process.exitCode = main(process.argv.slice(2));
