/**
 * Hostname patterns of an egress policy's `hostnames` rules, and the names they are matched against (a TLS
 * ClientHello's SNI, a cleartext HTTP/1.1 request's Host). A pattern is one of:
 * - an exact DNS name: `api.example.com`;
 * - `*.` and a DNS name: any name of exactly one more label (`*.example.com` matches `a.example.com`, never
 *   `example.com` nor `a.b.example.com`);
 * - `*`: any DNS name.
 * A DNS name here: 1 to 253 characters, dot-separated labels of 1 to 63 letters, digits and hyphens, no label
 * starting or ending with a hyphen, the last label not all digits (an IPv4 literal is not a name). Comparison is
 * ASCII case-insensitive: patterns and names are lowered (A-Z only) before they meet. An observed name loses one
 * trailing dot (`example.com.` is `example.com`); one that is not a DNS name after that (an IP literal, a byte
 * outside the letters, digits, hyphen and dot) matches no pattern, `*` included. Pure.
 */

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
const ALL_DIGITS = /^[0-9]+$/;

/** ASCII lower case: A-Z only (no locale, no Unicode folding). */
export function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
}

/** Whether `name` (already lowered) is a DNS name as defined above. */
export function isDnsName(name: string): boolean {
  if (name.length === 0 || name.length > 253) return false;
  const labels = name.split('.');
  if (!labels.every((l) => LABEL.test(l))) return false;
  return !ALL_DIGITS.test(labels[labels.length - 1] as string);
}

/** A pattern, lowered, or undefined when it is none of the three forms. */
export function checkHostnamePattern(text: unknown): string | undefined {
  if (typeof text !== 'string') return undefined;
  const pattern = asciiLower(text);
  if (pattern === '*') return pattern;
  return isDnsName(pattern.startsWith('*.') ? pattern.slice(2) : pattern) ? pattern : undefined;
}

/** The name an actor sent, lowered and without one trailing dot; undefined when it is not a DNS name. */
export function observedName(raw: string): string | undefined {
  const lowered = asciiLower(raw);
  const name = lowered.endsWith('.') ? lowered.slice(0, -1) : lowered;
  return isDnsName(name) ? name : undefined;
}

/** Whether `name` (from `observedName`) matches `pattern` (from `checkHostnamePattern`). */
export function hostnameMatches(pattern: string, name: string): boolean {
  if (pattern === '*') return true;
  if (!pattern.startsWith('*.')) return pattern === name;
  const suffix = pattern.slice(1); // ".example.com"
  return name.length > suffix.length && name.endsWith(suffix) && !name.slice(0, name.length - suffix.length).includes('.');
}
