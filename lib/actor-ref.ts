/**
 * Parses an actor reference from a request authority, exactly as the real ingress does
 * (`<name>.<atespace>.<suffix>[:port]`): one optional trailing dot, ASCII A-Z folded to lower case (no Unicode
 * folding), the suffix must match, the rest splits at the first dot into name and atespace, both DNS-1123 labels
 * of at most 63 characters; port 1-65535, default 80. Shared by extproc, the proxy's actor-cache and the workers,
 * so every component agrees on which actor a Host names.
 */

export const DEFAULT_ACTOR_SUFFIX = 'actors.resources.substrate.ate.dev';

export interface ActorRef {
  readonly atespace: string;
  readonly name: string;
}

export interface ParsedActorHost {
  readonly ref: ActorRef;
  /** `atespace/name`: the cache key and the form used in messages. */
  readonly key: string;
  /** The port named by the authority, default 80. */
  readonly port: number;
}

export type ActorHostParse =
  | { readonly kind: 'ok'; readonly actor: ParsedActorHost }
  | { readonly kind: 'invalid'; readonly reason: string };

const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** True for a DNS-1123 label of at most 63 characters. */
export function isResourceName(value: string): boolean {
  return value.length > 0 && value.length <= 63 && LABEL.test(value);
}

/** Folds ASCII A-Z only; other characters are left as they are (and then fail validation). */
export function lowerAscii(value: string): string {
  return value.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
}

export function actorKey(ref: ActorRef): string {
  return `${ref.atespace}/${ref.name}`;
}

/** Normalises a configured suffix: no leading or trailing dot, ASCII lower case. */
export function normaliseSuffix(suffix: string): string {
  return lowerAscii(suffix.replace(/^\.+/, '').replace(/\.+$/, ''));
}

function splitPort(authority: string): { host: string; port: number } | string {
  if (authority.startsWith('[')) return 'IPv6 literals do not name actors';
  const colon = authority.lastIndexOf(':');
  if (colon === -1) return { host: authority, port: 80 };
  const host = authority.slice(0, colon);
  const portText = authority.slice(colon + 1);
  if (!/^[0-9]{1,5}$/.test(portText)) return `invalid port "${portText}"`;
  const port = Number(portText);
  if (port < 1 || port > 65535) return `port ${port} out of range`;
  return { host, port };
}

/** Parses `authority` (a Host or :authority value). `suffix` must already be normalised. */
export function parseActorHost(authority: string | undefined, suffix: string = DEFAULT_ACTOR_SUFFIX): ActorHostParse {
  if (authority === undefined || authority.length === 0) return { kind: 'invalid', reason: 'empty host' };
  if (authority.length > 255 + 6) return { kind: 'invalid', reason: 'host too long' };
  const split = splitPort(authority);
  if (typeof split === 'string') return { kind: 'invalid', reason: split };
  let host = split.host;
  if (host.endsWith('.')) host = host.slice(0, -1);
  host = lowerAscii(host);
  const tail = `.${suffix}`;
  if (!host.endsWith(tail)) return { kind: 'invalid', reason: `not under ${suffix}` };
  const rest = host.slice(0, -tail.length);
  const dot = rest.indexOf('.');
  if (dot === -1) return { kind: 'invalid', reason: 'expected <actor>.<atespace>' };
  const name = rest.slice(0, dot);
  const atespace = rest.slice(dot + 1);
  if (!isResourceName(name)) return { kind: 'invalid', reason: `invalid actor name "${name}"` };
  if (!isResourceName(atespace)) return { kind: 'invalid', reason: `invalid atespace "${atespace}"` };
  const ref = Object.freeze({ atespace, name });
  return { kind: 'ok', actor: Object.freeze({ ref, key: actorKey(ref), port: split.port }) };
}
