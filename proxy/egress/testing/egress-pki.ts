/**
 * Certificates for egress tests: an actor identity CA and actor certificates it signs (one URI SAN each, ClientAuth
 * and ServerAuth), the bad ones the listener must refuse (another CA, expired, no URI SAN), and the listener's own
 * serving certificate from a CA of its own (for `localhost` and 127.0.0.1). Built once per test process, in a
 * temporary directory.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DevCa } from '../../../lib/tls/dev-ca.js';

export const ACTOR_URI_PREFIX = 'spiffe://substrate-actor.local/ateom-for-actor';

/** A client's credentials: what `tls.connect` and `http2.connect` take. */
export interface ClientCredentials {
  readonly cert: string;
  readonly key: string;
}

export interface EgressPki {
  readonly dir: string;
  /** The actor identity CA's certificate file (`--egress-client-ca`). */
  readonly actorCaFile: string;
  /** The listener's serving certificate (certificate and key in one bundle). */
  readonly server: { readonly certFile: string; readonly keyFile: string };
  /** What a client trusts the listener with. */
  readonly serverCa: string;
  /** Another serving certificate from the same CA (a rotation), its bundle file. */
  rotatedServer(): Promise<string>;
  /** A fresh certificate for `<atespace>/<name>` from the actor identity CA. */
  actor(atespace: string, name: string, opts?: { readonly days?: number }): Promise<ClientCredentials>;
  /** A certificate naming an actor, from another CA. */
  readonly otherCa: ClientCredentials;
  /** From the actor identity CA, no URI SAN. */
  readonly noUri: ClientCredentials;
  close(): Promise<void>;
}

async function credentials(bundleFile: string): Promise<ClientCredentials> {
  const pem = await readFile(bundleFile, 'utf8');
  return { cert: pem, key: pem };
}

let shared: Promise<EgressPki> | undefined;
let serial = 0;

async function build(): Promise<EgressPki> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-egress-pki-'));
  const actorCa = await DevCa.create(path.join(dir, 'actor'), { name: 'actor-ca', commonName: 'actor identity CA' });
  const serverCa = await DevCa.create(path.join(dir, 'server'), { name: 'server-ca', commonName: 'egress server CA' });
  const other = await DevCa.create(path.join(dir, 'other'), { name: 'other-ca', commonName: 'another CA' });
  const serverBundle = await serverCa.issue({ name: 'egress-server', commonName: 'egress', dnsNames: ['localhost'], ips: ['127.0.0.1'], usage: 'server' });
  const actor = async (atespace: string, name: string, opts: { readonly days?: number } = {}): Promise<ClientCredentials> =>
    credentials(
      await actorCa.issue({
        name: `actor-${serial++}`,
        commonName: name,
        uris: [`${ACTOR_URI_PREFIX}/${atespace}/${name}`],
        usage: 'client-and-server',
        ...(opts.days === undefined ? {} : { days: opts.days }),
      }),
    );
  return {
    dir,
    actorCaFile: actorCa.certFile,
    server: { certFile: serverBundle, keyFile: serverBundle },
    serverCa: await readFile(serverCa.certFile, 'utf8'),
    rotatedServer: () => serverCa.issue({ name: `egress-server-${serial++}`, commonName: 'egress', dnsNames: ['localhost'], ips: ['127.0.0.1'], usage: 'server' }),
    actor,
    otherCa: await credentials(await other.issue({ name: 'other-actor', commonName: 'a', uris: [`${ACTOR_URI_PREFIX}/team/a`], usage: 'client-and-server' })),
    noUri: await credentials(await actorCa.issue({ name: 'no-uri', commonName: 'a', usage: 'client-and-server' })),
    close: () => {
      shared = undefined;
      return rm(dir, { recursive: true, force: true });
    },
  };
}

/** The egress test PKI, shared until a caller closes it (in a final `after`); a later caller gets a fresh one. */
export function egressPki(): Promise<EgressPki> {
  shared ??= build();
  return shared;
}
