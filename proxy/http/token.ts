/**
 * An RFC 9110 token (§5.6.2) in lower case: what a header name or an upgrade protocol name given in the proxy's
 * config must be, once lower-cased.
 */
const LOWER_CASE_TOKEN = /^[!#$%&'*+\-.^_`|~0-9a-z]+$/;

/** `value` is a non-empty token of lower-case letters, digits and the token symbols. */
export function isLowerCaseToken(value: string): boolean {
  return LOWER_CASE_TOKEN.test(value);
}
