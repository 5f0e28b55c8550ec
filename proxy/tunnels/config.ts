/**
 * The tunnels' slice of the proxy's config (the `tunnels` section): WebSocket upgrades and CONNECT tunnels — how
 * long an idle one stays open and which upgrade tokens are forwarded — with their flags, composed into the proxy's
 * flags by `proxy/config.ts`. The upgrade tokens are read by the protocol engines (the ingress slice,
 * `edge/config.ts`), which decide whether a request opens a tunnel.
 */
import { UsageError, type FlagSpecs, type FlagValues } from '../../lib/flags.js';
import { isLowerCaseToken } from '../http/token.js';

export interface TunnelsConfig {
  /** `--tunnel-idle-timeout-ms` (0: no idle limit). */
  readonly idleTimeoutMs: number;
}

/** The `tunnels` section's flags. */
export const TUNNEL_FLAGS = {
  'tunnel-idle-timeout-ms': {
    type: 'number',
    env: 'PROXY_TUNNEL_IDLE_TIMEOUT_MS',
    section: 'tunnels',
    key: 'idleTimeoutMs',
    default: 300000,
    help: 'An upgraded connection (WebSocket) that carries no byte either way for this long is closed; 0 disables.',
  },
  'upgrade-allow': {
    type: 'list',
    env: 'PROXY_UPGRADE_ALLOW',
    section: 'tunnels',
    help: 'Upgrade tokens forwarded besides "websocket" (h2c is never forwarded: that request is served as HTTP/1.1).',
  },
} as const satisfies FlagSpecs;

/** The tunnels' slice from its flag values. */
export function buildTunnelsConfig(flags: Pick<FlagValues<typeof TUNNEL_FLAGS>, 'tunnel-idle-timeout-ms'>): TunnelsConfig {
  return Object.freeze({ idleTimeoutMs: flags['tunnel-idle-timeout-ms'] });
}

/** The upgrade tokens forwarded: "websocket" and `--upgrade-allow`'s, lower-cased (never h2c). */
export function buildUpgradeTokens(flags: Pick<FlagValues<typeof TUNNEL_FLAGS>, 'upgrade-allow'>): ReadonlySet<string> {
  const tokens = new Set(['websocket']);
  for (const raw of flags['upgrade-allow']) {
    const t = raw.trim().toLowerCase();
    if (!isLowerCaseToken(t)) throw new UsageError(`--upgrade-allow: "${raw}" is not an upgrade token`);
    if (t === 'h2c') throw new UsageError('--upgrade-allow: h2c cannot be forwarded');
    tokens.add(t);
  }
  return tokens;
}
