/**
 * The HTTP/2 and TLS arms: A and C as they are, driven by h2load (bench/h2load.ts) instead of autocannon, so the
 * ingress protocol is the only difference from the HTTP/1.1 arms of the same name.
 * - A-h2c, C-h2c: HTTP/2 with prior knowledge over cleartext;
 * - C-h2: HTTP/2 over TLS (ALPN h2) on the proxy's --tls-listen;
 * - C-tls11: HTTP/1.1 over TLS (ALPN http/1.1) on the same listener;
 * - C-h1: HTTP/1.1 over cleartext driven by h2load too (the same client as the others: the client's own share of
 *   any difference from C).
 */
import type { ArmSpec } from './arms.js';
import type { H2Protocol } from './h2load.js';

export const H2_ARM_NAMES = ['A-h2c', 'C-h1', 'C-h2c', 'C-h2', 'C-tls11'] as const;
export type H2ArmName = (typeof H2_ARM_NAMES)[number];

/** How an h2load arm reaches the ingress. */
export interface H2Transport {
  readonly protocol: H2Protocol;
  /** Whether the load goes to the proxy's HTTPS listener. */
  readonly tls: boolean;
}

function over(arm: ArmSpec, name: H2ArmName, transport: H2Transport, how: string): ArmSpec {
  return { ...arm, name, description: `${arm.name} over ${how} (h2load)`, transport };
}

export function h2Arms(A: ArmSpec, C: ArmSpec): Readonly<Record<H2ArmName, ArmSpec>> {
  return {
    'A-h2c': over(A, 'A-h2c', { protocol: 'h2c', tls: false }, 'h2c'),
    'C-h1': over(C, 'C-h1', { protocol: 'http1.1', tls: false }, 'HTTP/1.1'),
    'C-h2c': over(C, 'C-h2c', { protocol: 'h2c', tls: false }, 'h2c'),
    'C-h2': over(C, 'C-h2', { protocol: 'h2', tls: true }, 'HTTP/2 with TLS'),
    'C-tls11': over(C, 'C-tls11', { protocol: 'http1.1', tls: true }, 'HTTP/1.1 with TLS'),
  };
}
