/**
 * The HTTP/2 and TLS arms: A and C as they are, driven by h2load (bench/h2load.ts) instead of autocannon, so the
 * ingress protocol is the only difference from the HTTP/1.1 arms of the same name.
 * - A-h2c, C-h2c: HTTP/2 with prior knowledge over cleartext;
 * - C-h2: HTTP/2 over TLS (ALPN h2) on the proxy's --tls-listen;
 * - C-tls11: HTTP/1.1 over TLS (ALPN http/1.1) on the same listener;
 * - C-h1: HTTP/1.1 over cleartext driven by h2load too (the same client as the others: the client's own share of
 *   any difference from C).
 */
import type { H2Protocol } from './h2load.js';

export const H2_ARM_NAMES = ['A-h2c', 'C-h1', 'C-h2c', 'C-h2', 'C-tls11'] as const;
export type H2ArmName = (typeof H2_ARM_NAMES)[number];

/** How an h2load arm reaches the ingress. */
export interface H2Transport {
  readonly protocol: H2Protocol;
  /** Whether the load goes to the proxy's HTTPS listener. */
  readonly tls: boolean;
}

/** The arm each h2load arm is a variant of, its transport, and how its description names the transport. */
export const H2_ARMS: Readonly<Record<H2ArmName, { readonly base: 'A' | 'C'; readonly transport: H2Transport; readonly how: string }>> = Object.freeze({
  'A-h2c': { base: 'A', transport: { protocol: 'h2c', tls: false }, how: 'h2c' },
  'C-h1': { base: 'C', transport: { protocol: 'http1.1', tls: false }, how: 'HTTP/1.1' },
  'C-h2c': { base: 'C', transport: { protocol: 'h2c', tls: false }, how: 'h2c' },
  'C-h2': { base: 'C', transport: { protocol: 'h2', tls: true }, how: 'HTTP/2 with TLS' },
  'C-tls11': { base: 'C', transport: { protocol: 'http1.1', tls: true }, how: 'HTTP/1.1 with TLS' },
});
