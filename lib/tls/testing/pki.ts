/**
 * Test PKI: the development identity set in a temporary directory, plus the bad certificates the mTLS tests need
 * (another CA, a URI outside the prefix, an expired certificate, an IP SAN only, a proxy with the wrong identity).
 * Built once and shared until a caller closes it; a later caller (a test file run after it in the same process)
 * gets a fresh one.
 */
import { mkdtemp, rename, rm, writeFile, copyFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DevCa } from '../dev-ca.js';
import { devIdentities, writeDevCertificates, type DevCertFiles, type DevIdentities } from '../dev-certs.js';

export interface TestPki {
  readonly dir: string;
  readonly files: DevCertFiles;
  readonly ids: DevIdentities;
  /** Worker credential bundles that must be refused by the proxy. */
  readonly badWorkers: {
    readonly otherCa: string;
    readonly outsidePrefix: string;
    readonly expired: string;
    readonly ipOnly: string;
  };
  /** A proxy-like client certificate from the right CA with another identity. */
  readonly wrongProxy: string;
  /** A second proxy credential bundle with the same identity (for rotation). */
  readonly proxyRotated: string;
  /** Proxy-identity client certificates extproc must refuse. */
  readonly badClients: { readonly otherCa: string; readonly expired: string };
  /** extproc-identity server certificates the proxy must refuse (for another identity: `files.worker`). */
  readonly badExtprocs: { readonly otherCa: string; readonly expired: string };
  /** A second extproc credential bundle with the same identity (for rotation). */
  readonly extprocRotated: string;
  close(): Promise<void>;
}

let shared: Promise<TestPki> | undefined;

async function build(): Promise<TestPki> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-pki-'));
  const files = await writeDevCertificates(dir, { workers: 1 });
  const ids = devIdentities();
  const trusted = await DevCa.open(dir, 'ca');
  const other = await DevCa.create(path.join(dir, 'other'), { commonName: 'another CA' });
  const badWorkers = {
    otherCa: await other.issue({ name: 'bad-other-ca', commonName: 'w', uris: [ids.worker], usage: 'server' }, dir),
    outsidePrefix: await trusted.issue({ name: 'bad-outside-prefix', commonName: 'w', uris: ['spiffe://elsewhere.example/ns/x/sa/worker'], usage: 'server' }),
    expired: await trusted.issue({ name: 'bad-expired', commonName: 'w', uris: [ids.worker], usage: 'server', days: -1 }),
    ipOnly: await trusted.issue({ name: 'bad-ip-only', commonName: 'w', ips: ['127.0.0.1'], usage: 'server' }),
  };
  const wrongProxy = await trusted.issue({ name: 'wrong-proxy', commonName: 'intruder', uris: ['spiffe://cluster.local/ns/other/sa/intruder'], usage: 'client' });
  const proxyRotated = await trusted.issue({ name: 'proxy-rotated', commonName: 'proxy', uris: [ids.proxy], usage: 'client' });
  const badClients = {
    otherCa: await other.issue({ name: 'bad-client-other-ca', commonName: 'proxy', uris: [ids.proxy], usage: 'client' }, dir),
    expired: await trusted.issue({ name: 'bad-client-expired', commonName: 'proxy', uris: [ids.proxy], usage: 'client', days: -1 }),
  };
  const badExtprocs = {
    otherCa: await other.issue({ name: 'bad-extproc-other-ca', commonName: 'extproc', uris: [ids.extproc], usage: 'client-and-server' }, dir),
    expired: await trusted.issue({ name: 'bad-extproc-expired', commonName: 'extproc', uris: [ids.extproc], usage: 'client-and-server', days: -1 }),
  };
  const extprocRotated = await trusted.issue({ name: 'extproc-rotated', commonName: 'extproc', uris: [ids.extproc], usage: 'client-and-server' });
  return {
    dir,
    files,
    ids,
    badWorkers,
    wrongProxy,
    proxyRotated,
    badClients,
    badExtprocs,
    extprocRotated,
    close: () => {
      shared = undefined;
      return rm(dir, { recursive: true, force: true });
    },
  };
}

/** The test PKI, shared until a caller closes it (call `close` in a final after()); a later caller gets a fresh one. */
export function testPki(): Promise<TestPki> {
  shared ??= build();
  return shared;
}

/** Replaces `target` with a copy of `source` atomically (write aside, rename), as a rotation does. */
export async function replaceFile(source: string, target: string): Promise<void> {
  const aside = `${target}.${process.pid}.tmp`;
  await copyFile(source, aside);
  await rename(aside, target);
}

/** Writes `text` over `target` atomically. */
export async function replaceText(target: string, text: string): Promise<void> {
  const aside = `${target}.${process.pid}.tmp`;
  await writeFile(aside, text);
  await rename(aside, target);
}
