/**
 * What the egress arms of one run share, written once into a private temporary directory: the egress listener's
 * serving certificate (from a throw-away CA, for atunnel's server name), a throw-away actor identity CA with one
 * actor certificate per actor, and the loopback destination the tunnels open. Owned by the bench's Stack, removed
 * when it stops.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Destinations } from '../apiserver-stub/destinations.js';
import { createActorCa, mintActorCertificate } from '../lib/tls/actor-certs.js';
import { DevCa } from '../lib/tls/dev-ca.js';
import type { EgressActorCredential } from './egress-load.js';

/** The name atunnel dials, which the listener's certificate carries. */
export const EGRESS_SERVER_NAME = 'atenet-egress.ate-system.svc';

export class EgressFixtures {
  private constructor(
    private readonly dir: string,
    private readonly serverBundle: string,
    private readonly actorCaFile: string,
    /** The CA that signed the listener's certificate (PEM), for the load's clients. */
    readonly serverCa: string,
    readonly actors: readonly EgressActorCredential[],
    readonly destinations: Destinations,
  ) {}

  static async write(atespace: string, names: readonly string[]): Promise<EgressFixtures> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-bench-egress-'));
    try {
      const ca = await DevCa.create(dir, { days: 1 });
      const serverBundle = await ca.issue({ name: 'proxy-egress', commonName: EGRESS_SERVER_NAME, dnsNames: [EGRESS_SERVER_NAME], ips: ['127.0.0.1'], usage: 'server', days: 1 });
      const actorCa = await createActorCa(dir, { days: 1 });
      const actors: EgressActorCredential[] = [];
      for (const name of names) {
        const minted = await mintActorCertificate(dir, { atespace, name });
        actors.push({ actor: `${atespace}/${name}`, bundle: minted.bundle });
      }
      const destinations = await Destinations.start([{ host: '127.0.0.1', port: 0 }]);
      return new EgressFixtures(dir, serverBundle, actorCa.certFile, await readFile(ca.certFile, 'utf8'), actors, destinations);
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** The destination every tunnel opens, `ip:port`. */
  get destination(): string {
    return (this.destinations.list[0] as { address: string }).address;
  }

  /** The proxy flags of an egress listener on a free loopback port with these certificates. */
  proxyArgs(): string[] {
    return ['--egress-listen', '127.0.0.1:0', '--egress-tls-cert', this.serverBundle, '--egress-tls-key', this.serverBundle, '--egress-client-ca', this.actorCaFile];
  }

  async remove(): Promise<void> {
    await this.destinations.close();
    await rm(this.dir, { recursive: true, force: true });
  }
}
