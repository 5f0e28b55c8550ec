/**
 * An egress CONNECT as the proxy's egress listener sends it to extproc (lib/egress/wire.ts): request headers
 * `:method CONNECT`, `:authority` and `host` the destination, `end_of_stream`, and the certificate and the OUTBOUND
 * direction as attributes; the first answer decides, nothing more is sent.
 */
import { DIRECTION_ATTRIBUTE, OUTBOUND_DIRECTION, SOURCE_CERTIFICATE_ATTRIBUTE } from '../../lib/egress/wire.js';
import type { EnvoyLikeClient, EnvoyLikeResult } from './envoy-like-client.js';

export interface EgressConnect {
  readonly authority: string;
  /** The `source.certificate` attribute (undefined: left out). */
  readonly certificate: string | undefined;
  /** `xds.listener_direction` (default OUTBOUND). */
  readonly direction?: number;
  readonly metadata?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

export function egressConnect(client: EnvoyLikeClient, c: EgressConnect): Promise<EnvoyLikeResult> {
  return client.process({
    authority: c.authority,
    method: 'CONNECT',
    headers: { host: c.authority },
    sendResponseHeaders: false,
    attributes: {
      [DIRECTION_ATTRIBUTE]: { numberValue: c.direction ?? OUTBOUND_DIRECTION },
      ...(c.certificate === undefined ? {} : { [SOURCE_CERTIFICATE_ATTRIBUTE]: { stringValue: c.certificate } }),
    },
    ...(c.metadata === undefined ? {} : { metadata: c.metadata }),
    ...(c.signal === undefined ? {} : { signal: c.signal }),
  });
}

/** The first certificate of a PEM bundle (a credential bundle holds the certificate, then the key). */
export function firstCertificate(bundle: string): string {
  const m = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/.exec(bundle);
  if (m === null) throw new Error('no certificate in the bundle');
  return m[0];
}
