/**
 * Header mutations as Envoy's ext_proc applies them: `remove_headers` first, then `set_headers` (so a header both
 * removed and set ends with the new value); values only from `raw_value` (Envoy >= 1.32: a value given only in
 * `value` is empty, and both set is an error); `append: true` adds, anything else overwrites (`append_action` is
 * ignored, as Envoy's ext_proc does). Each name goes through Envoy's `HeaderMutationRules` checker:
 *
 * - `disallow_expression` match → refused; `allow_expression` match → allowed (unless refused below);
 * - `:authority` and `host` are always refused here (the actor a request goes to never changes), and so is
 *   `:scheme` (the upstream connection is always plain HTTP);
 * - system headers (`:`-prefixed) with `disallow_system` → refused; removing one → refused;
 * - `:method` only with `allow_all_routing`; `:path` may be set (origin-form only: anything else is an error);
 *   `:status` (responses) to a code in 200–599;
 * - `x-envoy-*` only with `allow_envoy`;
 * - hop-by-hop headers are never changed (they describe one connection).
 * A refused mutation is ignored, or an error with `disallow_is_error`.
 */
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { HOP_BY_HOP } from '../../http/hop-by-hop.js';
import { headerValueOf, type HeaderMutation } from './messages.js';
import type { MutationRules } from './settings.js';

/** Where a mutation applies: the request's headers (and request line), or a response head. */
export interface HeaderTarget {
  /** `:`-prefixed names this target lets a processor set (`:path`, `:method`; `:status`); returns an error text for a bad value. */
  readonly pseudo: ReadonlySet<string>;
  setPseudo(name: string, value: string): string | undefined;
  set(name: string, value: string): void;
  append(name: string, value: string): void;
  delete(name: string): void;
}

export interface MutationResult {
  /** Why the mutation is invalid (Envoy answers `status_on_error`, 500); undefined when applied. */
  readonly error: string | undefined;
  /** Some header was given only in `value` (read as empty). */
  readonly valueOnly: boolean;
  /** Mutations the rules refused and ignored. */
  readonly rejected: number;
}

const ALWAYS_REFUSED: ReadonlySet<string> = new Set([':authority', 'host', ':scheme']);

type Check = 'allow' | 'refuse';

function check(rules: MutationRules, name: string, op: 'set' | 'remove', target: HeaderTarget): Check {
  if (ALWAYS_REFUSED.has(name) || HOP_BY_HOP.has(name)) return 'refuse';
  if (rules.disallowExpression?.test(name) === true) return 'refuse';
  const system = name.startsWith(':');
  if (system) {
    if (rules.disallowSystem || op === 'remove' || !target.pseudo.has(name)) return 'refuse';
    if (name === ':method' && !rules.allowAllRouting && rules.allowExpression?.test(name) !== true) return 'refuse';
    return 'allow';
  }
  if (rules.allowExpression?.test(name) === true) return 'allow';
  if (name.startsWith('x-envoy') && !rules.allowEnvoy) return 'refuse';
  return 'allow';
}

/** Applies `m` to `target` under `rules`. */
export function applyMutation(target: HeaderTarget, m: HeaderMutation | null | undefined, rules: MutationRules): MutationResult {
  let valueOnly = false;
  let rejected = 0;
  const result = (error?: string): MutationResult => ({ error, valueOnly, rejected });
  if (m == null) return result();
  const refused = (what: string): string | undefined => {
    rejected++;
    return rules.disallowIsError ? `mutation of "${what}" is not allowed` : undefined;
  };
  for (const raw of m.remove_headers ?? []) {
    const name = raw.toLowerCase();
    if (name === '' || (!name.startsWith(':') && !isHeaderName(name))) return result(`invalid header name "${raw}" to remove`);
    if (check(rules, name, 'remove', target) === 'refuse') {
      const error = refused(name);
      if (error !== undefined) return result(error);
      continue;
    }
    target.delete(name);
  }
  for (const opt of m.set_headers ?? []) {
    const h = opt.header;
    if (h == null) continue;
    const name = h.key.toLowerCase();
    const v = headerValueOf(h);
    if (v.both) return result(`header "${name}" has both value and raw_value`);
    if (v.valueOnly) valueOnly = true;
    if (name === '' || (!name.startsWith(':') && !isHeaderName(name))) return result(`invalid header name "${h.key}"`);
    if (!isHeaderValue(v.value)) return result(`invalid value for header "${name}"`);
    if (check(rules, name, 'set', target) === 'refuse') {
      const error = refused(name);
      if (error !== undefined) return result(error);
      continue;
    }
    if (name.startsWith(':')) {
      const error = target.setPseudo(name, v.value);
      if (error !== undefined) return result(error);
    } else if (opt.append?.value === true) target.append(name, v.value);
    else target.set(name, v.value);
  }
  return result();
}

function isHeaderName(name: string): boolean {
  try {
    validateHeaderName(name);
    return true;
  } catch {
    return false;
  }
}

function isHeaderValue(value: string): boolean {
  try {
    validateHeaderValue('x', value);
    return true;
  } catch {
    return false;
  }
}

/** A `:path` a processor may set: origin-form (`/` then visible ASCII, no fragment). */
export { isOriginForm } from '../../http/origin-form.js';

/** A `:status` a processor may set: a code in 200–599. */
export function parseStatus(value: string): number | undefined {
  if (!/^\d{3}$/.test(value)) return undefined;
  const status = Number(value);
  return status >= 200 && status <= 599 ? status : undefined;
}

/** A response head (node's flat `[name, value, ...]` list, names in any case) as a mutation target. */
export class ResponseHeadTarget implements HeaderTarget {
  readonly pseudo: ReadonlySet<string> = new Set([':status']);
  constructor(
    public status: number,
    readonly headers: string[],
  ) {}

  setPseudo(_name: string, value: string): string | undefined {
    const status = parseStatus(value);
    if (status === undefined) return `invalid :status "${value}"`;
    this.status = status;
    return undefined;
  }

  set(name: string, value: string): void {
    this.delete(name);
    this.headers.push(name, value);
  }

  append(name: string, value: string): void {
    this.headers.push(name, value);
  }

  delete(name: string): void {
    const l = this.headers;
    for (let i = l.length - 2; i >= 0; i -= 2) if ((l[i] as string).toLowerCase() === name) l.splice(i, 2);
  }
}
