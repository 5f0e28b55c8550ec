/**
 * The development identity set `actor-edge certs` writes, and which `npm start` and compose use: a CA, the
 * proxy's client identity, extproc's identity (the ext_proc server, and a client of the control plane), the
 * control plane's server certificate, the proxy's ingress and egress serving certificates, one identity shared by
 * the stub's in-process workers and one per separate worker. Workload certificates carry only a SPIFFE URI SAN.
 * Besides, a second CA of its own: the actor identity CA, which signs actor certificates (actor-certs.ts).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createActorCa } from './actor-certs.js';
import { DevCa } from './dev-ca.js';

export const DEV_TRUST_DOMAIN = 'cluster.local';
/** Names the control plane's certificate is valid for (what `--apiserver-server-name` may say). */
export const DEV_CONTROL_PLANE_NAMES: readonly string[] = Object.freeze(['localhost', 'apiserver-control']);
/** Names the proxy's HTTPS serving certificate (`proxy-ingress.pem`) is valid for; it also carries IP 127.0.0.1. */
export const DEV_INGRESS_NAMES: readonly string[] = Object.freeze(['localhost']);
/** Names the egress listener's serving certificate (`proxy-egress.pem`) is valid for; it also carries IP 127.0.0.1. */
export const DEV_EGRESS_NAMES: readonly string[] = Object.freeze(['atenet-egress.ate-system.svc', 'localhost']);

export interface DevIdentities {
  readonly proxy: string;
  readonly extproc: string;
  /** Shared by apiserver-stub's in-process workers. */
  readonly worker: string;
  /** A separate worker's identity (`worker-1`, ...). */
  workerNamed(name: string): string;
}

export function devIdentities(trustDomain = DEV_TRUST_DOMAIN): DevIdentities {
  const base = `spiffe://${trustDomain}/ns/actor-edge`;
  return Object.freeze({
    proxy: `${base}/sa/proxy`,
    extproc: `${base}/sa/extproc`,
    worker: `${base}/sa/worker`,
    workerNamed: (name: string) => `${base}/worker/${name}`,
  });
}

export interface DevCertOptions {
  /** Separate workers to issue certificates for: worker-1 … worker-N. */
  readonly workers: number;
  readonly trustDomain?: string;
  readonly controlPlaneNames?: readonly string[];
  /** DNS names of the proxy's HTTPS serving certificate (`--tls-cert`/`--tls-key`). */
  readonly ingressNames?: readonly string[];
  /** DNS names of the egress listener's serving certificate. */
  readonly egressNames?: readonly string[];
  /** Validity of the issued certificates in days. */
  readonly days?: number;
}

/** The files written (all inside the output directory). */
export interface DevCertFiles {
  /** The trust bundle every component is given. */
  readonly ca: string;
  readonly proxy: string;
  readonly extproc: string;
  readonly controlPlane: string;
  /** The proxy's HTTPS serving certificate and key, one PEM file (give it as both --tls-cert and --tls-key). */
  readonly ingress: string;
  /** The egress listener's serving certificate and key, one PEM file (signed by `ca`). */
  readonly egress: string;
  /** The actor identity CA's certificate (its key is beside it, actor-ca.key): what the egress listener trusts. */
  readonly actorCa: string;
  readonly worker: string;
  readonly workers: readonly string[];
}

export async function writeDevCertificates(out: string, opts: DevCertOptions): Promise<DevCertFiles> {
  const ids = devIdentities(opts.trustDomain);
  const days = opts.days ?? 30;
  const ca = await DevCa.create(out);
  const issue = (name: string, usage: 'client' | 'server', uri: string): Promise<string> =>
    ca.issue({ name, commonName: name, uris: [uri], usage, days });
  const ingressNames = opts.ingressNames ?? DEV_INGRESS_NAMES;
  const egressNames = opts.egressNames ?? DEV_EGRESS_NAMES;
  const [proxy, extproc, controlPlane, ingress, egress, actorCa, worker] = await Promise.all([
    issue('proxy', 'client', ids.proxy),
    // extproc is the ext_proc server to the proxy and a client to the control plane.
    ca.issue({ name: 'extproc', commonName: 'extproc', uris: [ids.extproc], usage: 'client-and-server', days }),
    ca.issue({ name: 'control-plane', commonName: 'control-plane', dnsNames: opts.controlPlaneNames ?? DEV_CONTROL_PLANE_NAMES, usage: 'server', days }),
    ca.issue({ name: 'proxy-ingress', commonName: ingressNames[0] ?? 'localhost', dnsNames: ingressNames, ips: ['127.0.0.1'], usage: 'server', days }),
    ca.issue({ name: 'proxy-egress', commonName: egressNames[0] ?? 'localhost', dnsNames: egressNames, ips: ['127.0.0.1'], usage: 'server', days }),
    createActorCa(out),
    issue('worker', 'server', ids.worker),
  ]);
  const workers = await Promise.all(Array.from({ length: opts.workers }, (_, i) => issue(`worker-${i + 1}`, 'server', ids.workerNamed(`worker-${i + 1}`))));
  return { ca: path.join(out, 'ca.pem'), proxy, extproc, controlPlane, ingress, egress, actorCa: actorCa.certFile, worker, workers };
}

/** Certificates written into a private temporary directory, and how to remove them. */
export interface TemporaryDevCertificates {
  readonly files: DevCertFiles;
  remove(): Promise<void>;
}

/** `writeDevCertificates` into a fresh temporary directory named `<prefix>…` (removed again if writing fails). */
export async function writeTemporaryDevCertificates(prefix: string, opts: DevCertOptions): Promise<TemporaryDevCertificates> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  try {
    const files = await writeDevCertificates(dir, opts);
    return { files, remove: () => rm(dir, { recursive: true, force: true }) };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
