/**
 * One output line of a stack component, prefixed with the component's name. pino JSON lines are shown compactly
 * (`LEVEL msg key=value ...`) unless raw JSON is asked for, and so are the proxy's access-log lines (`ACCESS …`:
 * they have no level, so LOG_LEVEL never hides them, and null fields are left out); anything else is passed
 * through as it is.
 */
export interface LineFormat {
  /** Width the name column is padded to. */
  readonly width: number;
  /** Keep each component's JSON lines unchanged. */
  readonly raw: boolean;
  /** ANSI colour for the name column (terminals only). */
  readonly color: boolean;
}

const LEVELS: Readonly<Record<number, string>> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const LEVEL_VALUES: Readonly<Record<string, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/** pino's numeric value of a level name (`info` → 30), or undefined for an unknown name. */
export function levelValue(name: string): number | undefined {
  return LEVEL_VALUES[name.trim().toLowerCase()];
}

/** The numeric level of a pino JSON line, or undefined when the line is not one. */
export function levelOf(line: string): number | undefined {
  if (!line.startsWith('{"level":')) return undefined;
  const m = /^\{"level":(\d+)[,}]/.exec(line);
  return m ? Number(m[1]) : undefined;
}
const HIDDEN = new Set(['level', 'time', 'pid', 'hostname', 'component', 'msg', 'v']);
const COLORS = [36, 33, 35, 32, 34, 31];

function colorOf(name: string): number {
  let h = 0;
  for (const ch of name) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return COLORS[h % COLORS.length] ?? 36;
}

function renderValue(v: unknown): string {
  if (typeof v === 'string') return /[\s"=]/.test(v) || v === '' ? JSON.stringify(v) : v;
  return JSON.stringify(v) ?? String(v);
}

/** The proxy's access-log lines (`proxy/ops/access-log.ts`): JSON without a level. */
const ACCESS_KINDS: ReadonlySet<unknown> = new Set(['access', 'admin']);

/** `LEVEL msg k=v ...` for a pino record (`ACCESS msg k=v ...` for an access-log line), or undefined when the line is neither. */
export function compactJsonLog(line: string): string | undefined {
  if (!line.startsWith('{')) return undefined;
  let rec: unknown;
  try {
    rec = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof rec !== 'object' || rec === null || Array.isArray(rec)) return undefined;
  const r = rec as Record<string, unknown>;
  const access = typeof r.level !== 'number' && ACCESS_KINDS.has(r.msg);
  if (typeof r.level !== 'number' && !access) return undefined;
  const level = access ? 'ACCESS' : (LEVELS[r.level as number] ?? String(r.level)).padEnd(5);
  const parts = [level, typeof r.msg === 'string' ? r.msg : ''];
  for (const [k, v] of Object.entries(r)) {
    if (HIDDEN.has(k) || v === undefined || (access && v === null)) continue;
    if (k === 'err' && typeof v === 'object' && v !== null && 'stack' in v) {
      parts.push(`err=${renderValue((v as { stack: unknown }).stack)}`);
      continue;
    }
    parts.push(`${k}=${renderValue(v)}`);
  }
  return parts.filter((p) => p !== '').join(' ');
}

export function formatLine(name: string, line: string, fmt: LineFormat): string {
  const label = name.padEnd(fmt.width);
  const prefix = fmt.color ? `\u001b[${colorOf(name)}m${label} |\u001b[0m` : `${label} |`;
  const body = fmt.raw ? line : (compactJsonLog(line) ?? line);
  return `${prefix} ${body}`;
}
