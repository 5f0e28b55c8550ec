/**
 * What the report's arm names mean (A, B1, B2, C, floor, …), for the Markdown and the chart: each arm of the run
 * with its one-line description from `arms.ts`, so a reader needs no other file to read a table.
 */
import { ARMS, TARGET_ARM, type ArmSpec } from './arms.js';

/** The arm's description, or undefined for a name `arms.ts` does not know (a side-by-side label). */
export function armDescription(name: string): string | undefined {
  if (name === TARGET_ARM.name) return TARGET_ARM.description;
  return (ARMS as Readonly<Record<string, ArmSpec>>)[name]?.description;
}

/** `[name, description]` for each arm named, in the order given, unknown names left out, each once. */
export function armLegend(names: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (const name of new Set(names)) {
    const description = armDescription(name);
    if (description !== undefined) out.push([name, description]);
  }
  return out;
}

/** The legend as Markdown: one bullet per arm. */
export function legendMarkdown(names: readonly string[]): string[] {
  const legend = armLegend(names);
  if (legend.length === 0) return [];
  return ['Arms:', '', ...legend.map(([name, d]) => `- \`${name}\`: ${d}`), ''];
}
