/**
 * The flag reference (docs/reference/flags.md), generated from a component's flag declarations: one table per
 * config file section (flag, environment variable, config file key, default, meaning), between marker comments
 * that `scripts/docs.ts` rewrites. The same declarations make `--help`, so the two cannot disagree.
 */
import { fileKey, flagsIn, type FlagSet, type FlagSpec } from './flags.js';

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function code(text: string): string {
  return `\`${text.replace(/\|/g, '\\|')}\``;
}

/** The default as the table shows it. */
export function defaultText(spec: FlagSpec): string {
  switch (spec.type) {
    case 'string?':
    case 'list':
      return 'none';
    case 'boolean':
      return spec.default ? 'on' : 'off';
    case 'string':
      return spec.secret === true || spec.default === '' ? 'empty' : code(spec.default);
    default:
      return code(String(spec.default));
  }
}

function flagCell(name: string, spec: FlagSpec): string {
  const value = spec.type === 'choice' ? ` ${spec.choices.join('|')}` : spec.type === 'boolean' ? '' : spec.type === 'number' ? ' N' : ' VALUE';
  return code(`--${name}${value}`) + (spec.type === 'list' ? ' (repeatable)' : '');
}

function envCell(spec: FlagSpec): string {
  const former = spec.envAliases?.length ? ` (formerly ${spec.envAliases.map(code).join(', ')})` : '';
  return code(spec.env) + former;
}

function row(name: string, spec: FlagSpec): string {
  const key = fileKey(name, spec);
  return `| ${flagCell(name, spec)} | ${envCell(spec)} | ${key === undefined ? '—' : code(key)} | ${defaultText(spec)} | ${cell(spec.help)} |`;
}

const HEAD = ['| flag | env | config file | default | meaning |', '|---|---|---|---|---|'];

/** The markdown for one component (what sits between its markers). */
export function flagTables(set: FlagSet): string {
  const out: string[] = [];
  const general = flagsIn(set.flags, undefined);
  if (general.length > 0) out.push(...HEAD, ...general.map(([n, s]) => row(n, s)), '');
  for (const [section, about] of Object.entries(set.sections)) {
    const flags = flagsIn(set.flags, section);
    const fields = Object.entries(set.fileFields ?? {}).filter(([path]) => path.startsWith(`${section}.`));
    if (flags.length === 0 && fields.length === 0) continue;
    out.push(`**${section}**: ${about}`, '', ...HEAD, ...flags.map(([n, s]) => row(n, s)));
    for (const [path, field] of fields) out.push(`| ${field.flag === undefined ? '(file only)' : code(`--${field.flag}`)} | | ${code(path)} | none | ${cell(field.help)} |`);
    out.push('');
  }
  for (const [name, about] of Object.entries(set.variables ?? {})) out.push(`Also read: ${code(name)}: ${cell(about)}`, '');
  return out.join('\n').trimEnd();
}

export const MARKER = (command: string) => ({ open: `<!-- flags:${command} -->`, close: `<!-- /flags:${command} -->` });

/** `text` with the tables between `command`'s markers replaced; throws if the markers are missing. */
export function replaceFlagTables(text: string, set: FlagSet): string {
  const { open, close } = MARKER(set.command);
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start < 0 || end < start) throw new Error(`the flag reference has no ${open} … ${close} markers`);
  const note = '<!-- generated from the flag declarations by `npm run docs`: edit those, not this table -->';
  return `${text.slice(0, start)}${open}\n${note}\n\n${flagTables(set)}\n\n${text.slice(end)}`;
}
