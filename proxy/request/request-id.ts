/**
 * Request ids for requests that arrive without `x-request-id`: UUID-shaped (8-4-4-4-12 hex), unique without a
 * random draw per request — 80 random bits chosen once per process (and again whenever the counter would wrap),
 * then a 48-bit counter. Two proxy processes share a prefix with probability 2^-80.
 */
import { randomBytes } from 'node:crypto';

let prefix = '';
let counter = 0;
const COUNTER_LIMIT = 2 ** 48;

function newPrefix(): void {
  const h = randomBytes(10).toString('hex'); // 20 hex digits
  prefix = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-`;
  counter = 0;
}
newPrefix();

export function nextRequestId(): string {
  if (++counter >= COUNTER_LIMIT) newPrefix();
  return prefix + counter.toString(16).padStart(12, '0');
}
