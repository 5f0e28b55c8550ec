/**
 * What `actor-edge validate` reports for a configuration that passed every start-up check: the component, the file,
 * deprecated names used, what it would run (one line per listener, chain, upstream, ...) and the effective
 * configuration as JSON, secrets left out. A configuration that fails is a UsageError naming the field or file.
 */

export interface ValidConfig {
  readonly component: string;
  readonly file: string | undefined;
  readonly warnings: readonly string[];
  /** What it would run: label and description, in order. */
  readonly plan: readonly (readonly [string, string])[];
  /** The effective configuration. */
  readonly config: unknown;
}

/** Keys whose values are never printed. */
const SECRET = /token|secret|password/i;

/** `value` as plain JSON data: Sets and arrays as arrays, RegExps as their source, addresses as HOST:PORT, secrets as "(set)". */
export function printable(value: unknown, key = ''): unknown {
  if (SECRET.test(key) && value !== undefined) return '(set)';
  if (value instanceof RegExp) return value.source;
  if (value instanceof Set) return [...value].map((v) => printable(v));
  if (Array.isArray(value)) return value.map((v) => printable(v));
  if (value !== null && typeof value === 'object') {
    const { host, port } = value as { host?: unknown; port?: unknown };
    if (Object.keys(value).length === 2 && typeof host === 'string' && typeof port === 'number') return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, printable(v, k)]));
  }
  return value;
}

export function describeValid(v: ValidConfig): string {
  const width = Math.max(0, ...v.plan.map(([label]) => label.length)) + 2;
  const lines = [
    `${v.component} configuration is valid${v.file === undefined ? ' (no config file)' : ` (${v.file})`}`,
    ...v.warnings.map((w) => `warning: ${w}`),
    '',
    'would run:',
    ...v.plan.map(([label, text]) => `  ${label.padEnd(width)}${text}`),
    '',
    'effective configuration:',
    JSON.stringify(printable(v.config), null, 2),
  ];
  return lines.join('\n') + '\n';
}
