/**
 * deploy/kubernetes, offline: each overlay rendered (the in-repo renderer; and with `kubectl kustomize` where it is
 * installed, which must render the same objects), every object validated strictly against Kubernetes v1.33's API
 * (unknown fields rejected: a misspelled field fails), and what the product needs of them: probes, drain timing,
 * hardening, the Service and autoscaling, NetworkPolicies that allow the product's hops and nothing else (no admin
 * port from outside the namespace), and command lines that every component's own flag parser accepts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { proxyConfigOf, readProxyConfig } from '../../proxy/config.js';
import { extprocConfigOf, readExtprocConfig } from '../../extproc/config.js';
import { readStubConfig } from '../../apiserver-stub/config.js';
import { readWorkerConfig } from '../../apiserver-stub/worker/config.js';
import { renderKustomization, type JsonObject, type JsonValue, type ManifestObject } from './kustomize.js';
import { formatProblems, KUBERNETES_VERSION, validateManifests } from './schema.js';
import { admits, allows, type Peer } from './network-policy.js';

const run = promisify(execFile);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const OVERLAYS = ['dev', 'production'] as const;
type Overlay = (typeof OVERLAYS)[number];
const overlayDir = (o: Overlay): string => path.join(ROOT, 'deploy/kubernetes/overlays', o);
const rendered: Record<Overlay, ManifestObject[]> = { dev: renderKustomization(overlayDir('dev')), production: renderKustomization(overlayDir('production')) };

const ADMIN_PORTS = [9901, 9902, 9903];

function find(objects: readonly ManifestObject[], kind: string, name: string): ManifestObject {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(o, `no ${kind}/${name}`);
  return o;
}

const o = (v: JsonValue | undefined): JsonObject => (typeof v === 'object' && v !== null && !Array.isArray(v) ? v : {});
const a = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);

function podSpec(d: ManifestObject): JsonObject {
  return o(o(o(d.spec).template).spec);
}

function containers(d: ManifestObject): JsonObject[] {
  return a(podSpec(d).containers).map(o);
}

test(`every object of every overlay is valid against Kubernetes ${KUBERNETES_VERSION}, strictly; a misspelled field anywhere is not`, () => {
  const misspelled = structuredClone(find(rendered.dev, 'Deployment', 'actor-edge-proxy'));
  const c = containers(misspelled)[0] as JsonObject;
  c.readinesProbe = c.readinessProbe as JsonValue;
  delete c.readinessProbe;
  const policy = structuredClone(find(rendered.production, 'NetworkPolicy', 'proxy'));
  const peer = o(a(o(a(o(policy.spec).egress)[0]).to)[0]);
  peer.podSelecter = peer.podSelector as JsonValue;
  delete peer.podSelector;
  const unknownKind = { apiVersion: 'apps/v1', kind: 'Deploymnet', metadata: { name: 'x' } } as ManifestObject;
  const sets = [...OVERLAYS.map((name) => ({ name, objects: rendered[name] })), { name: 'broken', objects: [misspelled, policy, unknownKind] }];
  const tag = new Map<ManifestObject, string>(sets.flatMap((s) => s.objects.map((x) => [x, s.name] as const)));
  const problems = validateManifests(
    sets.flatMap((s) => s.objects),
    (x) => `${tag.get(x)}: ${x.kind}/${x.metadata.name}`,
  );
  const valid = problems.filter((p) => !p.object.startsWith('broken'));
  assert.deepEqual(valid, [], formatProblems(valid));
  assert.ok(rendered.dev.length >= 20 && rendered.production.length >= 14);
  const broken = problems.filter((p) => p.object.startsWith('broken'));
  const at = (object: string, pointer: string) => broken.find((p) => p.object === `broken: ${object}` && p.path === pointer);
  assert.match(at('Deployment/actor-edge-proxy', '/spec/template/spec/containers/0/readinesProbe')?.message ?? '', /readinesProbe' does not exist/);
  assert.match(at('NetworkPolicy/proxy', '/spec/egress/0/to/0/podSelecter')?.message ?? '', /podSelecter' does not exist/);
  assert.match(at('Deploymnet/x', '/apiVersion')?.message ?? '', /no apps\/v1 Deploymnet/);
  assert.equal(broken.length, 3, formatProblems(broken));
});

/** `kubectl kustomize`'s output for an overlay, or why it cannot be had. */
async function kubectlRender(overlay: Overlay): Promise<{ kind: 'ok'; objects: ManifestObject[] } | { kind: 'skip'; why: string }> {
  let version: string;
  try {
    version = (await run('kubectl', ['version', '--client'])).stdout;
  } catch {
    return { kind: 'skip', why: 'kubectl is not installed: the render comparison is skipped (the schema validation above ran on the in-repo rendering)' };
  }
  const major = /Kustomize Version: v(\d+)/.exec(version)?.[1];
  if (major === undefined || Number(major) < 4) return { kind: 'skip', why: `kubectl's kustomize is older than v4 (no "patches" field): ${version.trim()}` };
  const { stdout } = await run('kubectl', ['kustomize', overlayDir(overlay)], { maxBuffer: 16 << 20 });
  return { kind: 'ok', objects: parseAllDocuments(stdout).map((d) => d.toJS() as ManifestObject).filter((x) => x !== null) };
}

const keyOf = (x: ManifestObject): string => `${x.apiVersion} ${x.kind} ${x.metadata.namespace ?? ''}/${x.metadata.name}`;

test('kubectl kustomize renders every overlay to the same objects as the in-repo renderer', async (t) => {
  for (const overlay of OVERLAYS) {
    const theirs = await kubectlRender(overlay);
    if (theirs.kind === 'skip') return t.skip(theirs.why);
    const mine = new Map(rendered[overlay].map((x) => [keyOf(x), x]));
    const other = new Map(theirs.objects.map((x) => [keyOf(x), x]));
    assert.deepEqual([...other.keys()].sort(), [...mine.keys()].sort(), overlay);
    for (const [k, x] of mine) assert.deepEqual(other.get(k), x, `${overlay}: ${k}`);
  }
});

test('the proxy: /ready readiness and /live liveness on the admin port, preStop sleep, a grace longer than the drain, spread', async () => {
  for (const overlay of OVERLAYS) {
    const d = find(rendered[overlay], 'Deployment', 'actor-edge-proxy');
    const spec = podSpec(d);
    const c = containers(d)[0] as JsonObject;
    const admin = a(c.ports).map(o).find((p) => p.name === 'admin');
    assert.equal(admin?.containerPort, 9901);
    assert.deepEqual(o(o(c.readinessProbe).httpGet), { path: '/ready', port: 'admin' });
    assert.deepEqual(o(o(c.livenessProbe).httpGet), { path: '/live', port: 'admin' });
    const preStopS = Number(o(o(o(c.lifecycle).preStop).sleep).seconds);
    assert.ok(preStopS >= 5, 'a preStop that waits while the endpoint removal propagates');
    // The drain timings come from the config file the Deployment mounts.
    const config = parseAllDocuments(String(o(find(rendered[overlay], 'ConfigMap', 'actor-edge-proxy-config').data)['proxy.yaml']))[0]?.toJS() as Record<string, unknown>;
    const ops = o(config.ops as JsonValue);
    const drainS = (Number(ops.drainDelayMs) + Number(ops.drainTimeoutMs)) / 1000;
    assert.ok(drainS > 0);
    assert.ok(Number(spec.terminationGracePeriodSeconds) > preStopS + drainS, `grace ${spec.terminationGracePeriodSeconds} s must exceed preStop ${preStopS} s + drain ${drainS} s`);
    const keys = a(spec.topologySpreadConstraints).map((x) => o(x).topologyKey);
    assert.deepEqual(keys, ['topology.kubernetes.io/zone', 'kubernetes.io/hostname']);
    assert.equal(o(o(d.spec).strategy).type, 'RollingUpdate');
    assert.equal(o(o(o(d.spec).strategy).rollingUpdate).maxUnavailable, 0, 'a rollout never lowers the serving replicas');
  }
});

test('every container: non-root, read-only root filesystem, every capability dropped, no privilege escalation, requests and limits; no API token', () => {
  for (const overlay of OVERLAYS) {
    for (const d of rendered[overlay].filter((x) => x.kind === 'Deployment')) {
      const spec = podSpec(d);
      assert.equal(o(spec.securityContext).runAsNonRoot, true, d.metadata.name);
      assert.ok(Number(o(spec.securityContext).runAsUser) > 0, d.metadata.name);
      assert.equal(o(o(spec.securityContext).seccompProfile).type, 'RuntimeDefault');
      assert.equal(spec.automountServiceAccountToken, false);
      for (const c of containers(d)) {
        const sc = o(c.securityContext);
        assert.equal(sc.readOnlyRootFilesystem, true, `${d.metadata.name}/${c.name}`);
        assert.equal(sc.allowPrivilegeEscalation, false);
        assert.deepEqual(o(sc.capabilities).drop, ['ALL']);
        for (const r of ['cpu', 'memory']) {
          assert.ok(o(o(c.resources).requests)[r] !== undefined && o(o(c.resources).limits)[r] !== undefined, `${d.metadata.name}/${c.name}: ${r} request and limit`);
        }
        assert.ok(c.livenessProbe !== undefined && c.readinessProbe !== undefined, `${d.metadata.name}/${c.name}: probes`);
      }
    }
  }
});

test('the Service is a LoadBalancer that keeps client addresses; the PDB and the HPA govern the proxy Deployment', () => {
  for (const overlay of OVERLAYS) {
    const objects = rendered[overlay];
    const svc = o(find(objects, 'Service', 'actor-edge-proxy').spec);
    assert.equal(svc.type, 'LoadBalancer');
    assert.equal(svc.externalTrafficPolicy, 'Local');
    const selector = o(o(find(objects, 'Deployment', 'actor-edge-proxy').spec).selector).matchLabels;
    assert.deepEqual(svc.selector, selector);
    assert.deepEqual(o(o(find(objects, 'PodDisruptionBudget', 'actor-edge-proxy').spec).selector).matchLabels, selector);
    const hpa = o(find(objects, 'HorizontalPodAutoscaler', 'actor-edge-proxy').spec);
    assert.deepEqual(hpa.scaleTargetRef, { apiVersion: 'apps/v1', kind: 'Deployment', name: 'actor-edge-proxy' });
    assert.ok(Number(hpa.minReplicas) >= 2 && Number(hpa.maxReplicas) > Number(hpa.minReplicas));
  }
  const https = a(o(find(rendered.production, 'Service', 'actor-edge-proxy').spec).ports).map(o).find((p) => p.name === 'https');
  assert.deepEqual(https, { name: 'https', port: 443, targetPort: 'https', protocol: 'TCP' });
});

const pod = (component: string): Peer => ({ kind: 'pod', labels: { 'app.kubernetes.io/name': 'actor-edge', 'app.kubernetes.io/component': component } });
const elsewhere = (component: string): Peer => ({ kind: 'pod', labels: { 'app.kubernetes.io/component': component }, namespaceLabels: { 'kubernetes.io/metadata.name': 'other' } });
const internet: Peer = { kind: 'address', ip: '203.0.113.7' };

test('NetworkPolicies: the product hops pass, nothing else does, and no admin port is reachable from outside the namespace', () => {
  const dev = rendered.dev;
  const hops: [Peer, Peer, number][] = [
    [internet, pod('proxy'), 8080],
    [pod('proxy'), pod('extproc'), 50051],
    [pod('proxy'), pod('worker'), 8443],
    [pod('extproc'), pod('control-plane'), 50052],
    [pod('worker'), pod('control-plane'), 50053],
    [pod('worker'), pod('proxy'), 9443], // actors' tunnels to the egress gateway
    [pod('proxy'), internet, 443], // the gateway dials what ext_proc allowed, outside the cluster
    [pod('proxy'), { kind: 'address', ip: '198.18.7.1' }, 5432],
  ];
  for (const [from, to, port] of hops) assert.ok(allows(dev, { from, to, port }), `${JSON.stringify(from)} → ${JSON.stringify(to)}:${port}`);
  // An admin port admits the pods of this namespace (a monitoring pod there needs an egress rule of its own).
  for (const [component, port] of [['proxy', 9901], ['extproc', 9902], ['control-plane', 9903]] as const) {
    assert.ok(admits(dev, { from: pod('monitoring'), to: pod(component), port }), `${component}:${port} from this namespace`);
  }
  const dns = { kind: 'pod', labels: { 'k8s-app': 'kube-dns' }, namespaceLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } as const;
  for (const c of ['proxy', 'extproc', 'worker', 'control-plane']) assert.ok(allows(dev, { from: pod(c), to: dns, port: 53, protocol: 'UDP' }), `${c} → DNS`);
  const refused: [Peer, Peer, number][] = [
    [pod('worker'), pod('extproc'), 50051], // actor code never reaches ext_proc
    [pod('worker'), pod('control-plane'), 50052], // nor the control API
    [pod('worker'), pod('proxy'), 9901],
    [internet, pod('worker'), 8443], // nor is a worker reachable from outside
    [internet, pod('extproc'), 50051],
    [pod('proxy'), pod('control-plane'), 50052],
    [internet, pod('proxy'), 9443], // the egress gateway serves the workers only
    [pod('extproc'), pod('proxy'), 9443],
    // through the gateway no actor reaches into the cluster or the cloud's metadata
    [pod('proxy'), { kind: 'address', ip: '10.1.2.3' }, 8080],
    [pod('proxy'), { kind: 'address', ip: '172.20.0.5' }, 443],
    [pod('proxy'), { kind: 'address', ip: '192.168.1.1' }, 80],
    [pod('proxy'), { kind: 'address', ip: '100.64.0.1' }, 80],
    [pod('proxy'), { kind: 'address', ip: '169.254.169.254' }, 80],
  ];
  for (const [from, to, port] of refused) assert.ok(!allows(dev, { from, to, port }), `must refuse ${JSON.stringify(from)} → ${JSON.stringify(to)}:${port}`);
  for (const overlay of OVERLAYS) {
    for (const [component, port] of [['proxy', 9901], ['extproc', 9902], ['control-plane', 9903]] as const) {
      for (const from of [internet, elsewhere('prometheus'), elsewhere('proxy')]) {
        assert.ok(!admits(rendered[overlay], { from, to: pod(component), port }), `${overlay}: ${component}:${port} from ${JSON.stringify(from)}`);
      }
    }
  }
  // Production: HTTPS from anywhere; the workers and the control plane are addresses outside the cluster.
  const prod = rendered.production;
  assert.ok(allows(prod, { from: internet, to: pod('proxy'), port: 8443 }));
  assert.ok(allows(prod, { from: pod('proxy'), to: { kind: 'address', ip: '192.0.2.10' }, port: 8443 }));
  assert.ok(allows(prod, { from: pod('extproc'), to: { kind: 'address', ip: '198.51.100.20' }, port: 50052 }));
  assert.ok(!allows(prod, { from: pod('proxy'), to: { kind: 'address', ip: '198.51.100.20' }, port: 50052 }), 'the gateway never dials the control plane');
  assert.ok(!allows(prod, { from: pod('proxy'), to: { kind: 'address', ip: '192.0.2.10' }, port: 22 }), 'nor the workers but on their serving port');
  assert.ok(!allows(prod, { from: pod('proxy'), to: pod('worker'), port: 8443 }), 'production has no worker pods here');
  // Production: the workers' tunnel agents (addresses outside the cluster) reach the egress gateway; nothing else does.
  assert.ok(allows(prod, { from: { kind: 'address', ip: '192.0.2.10' }, to: pod('proxy'), port: 9443 }));
  assert.ok(!allows(prod, { from: internet, to: pod('proxy'), port: 9443 }));
  assert.ok(allows(prod, { from: pod('proxy'), to: internet, port: 443 }));
  // Every ingress rule that opens an admin port names only pods of this namespace.
  for (const overlay of OVERLAYS) {
    for (const np of rendered[overlay].filter((x) => x.kind === 'NetworkPolicy')) {
      for (const rule of a(o(np.spec).ingress).map(o)) {
        const ports = rule.ports === undefined ? ADMIN_PORTS : a(rule.ports).map((p) => o(p).port);
        if (!ports.some((p) => ADMIN_PORTS.includes(Number(p)))) continue;
        assert.ok(a(rule.from).length > 0, `${overlay}: ${np.metadata.name} opens an admin port to every peer`);
        for (const peer of a(rule.from).map(o)) assert.ok(peer.ipBlock === undefined && peer.namespaceSelector === undefined, `${overlay}: ${np.metadata.name}`);
      }
    }
  }
});

type Reader = (argv: string[], env: NodeJS.ProcessEnv) => { readonly kind: 'help' } | { readonly kind: 'config'; readonly config: unknown };
const READERS: Readonly<Record<string, Reader>> = {
  proxy: readProxyConfig,
  extproc: readExtprocConfig,
  'apiserver-stub': readStubConfig,
  worker: readWorkerConfig,
};

test("every container's command line and environment parse with its component's own flags (the proxy's ConfigMap as its --config)", async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-manifests-'));
  try {
    for (const overlay of OVERLAYS) {
      const objects = rendered[overlay];
      const config = path.join(dir, `${overlay}-proxy.yaml`);
      await writeFile(config, String(o(find(objects, 'ConfigMap', 'actor-edge-proxy-config').data)['proxy.yaml']));
      for (const d of objects.filter((x) => x.kind === 'Deployment')) {
        for (const c of containers(d)) {
          const [component, ...argv] = a(c.args).map(String);
          const read = READERS[component as string];
          assert.ok(read, `${d.metadata.name}: unknown component ${component}`);
          const args = argv.map((x) => (x === '/etc/actor-edge/config/proxy.yaml' ? config : x));
          const parsed = read(args, containerEnv(c));
          assert.equal(parsed.kind, 'config', `${overlay}: ${d.metadata.name} ${component} ${argv.join(' ')}`);
        }
      }
      // The proxy's config as the product reads it: the admin and ingress on every interface, drain delay set.
      const read = readProxyConfig(['--config', config], {});
      assert.deepEqual(read.kind === 'config' ? read.warnings : undefined, [], 'the ConfigMap is in the nested form: no deprecation warning');
      const proxy = proxyConfigOf(['--config', config], {});
      assert.equal(proxy?.listeners.listen.port, 8080);
      assert.equal(proxy?.ops.admin.port, 9901);
      assert.ok((proxy?.ops.drainDelayMs ?? 0) > 0);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** A container's environment as its process sees it (a Secret's value stands in as a placeholder). */
function containerEnv(c: JsonObject): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const e of a(c.env).map(o)) env[String(e.name)] = e.value !== undefined ? String(e.value) : o(e.valueFrom).fieldRef !== undefined ? '10.1.2.3' : 'from-a-secret';
  return env;
}

/** The Secret mounted (read-only) at the directory that holds `file` in `d`'s first container; undefined if none. */
function secretHolding(d: ManifestObject, file: string): string | undefined {
  const mount = a(containers(d)[0]?.volumeMounts).map(o).find((m) => path.dirname(file) === String(m.mountPath));
  if (mount === undefined || mount.readOnly !== true) return undefined;
  const volume = a(podSpec(d).volumes).map(o).find((v) => v.name === mount.name);
  const secret = o(volume?.secret).secretName;
  return secret === undefined ? undefined : String(secret);
}

test('the egress gateway: its own ClusterIP Service on 443 to the listener the config opens, its serving certificate and the actor identity CA from Secrets; the CA key only in the dev stub', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-manifests-'));
  try {
    for (const overlay of OVERLAYS) {
      const objects = rendered[overlay];
      const deployment = find(objects, 'Deployment', 'actor-edge-proxy');
      const configFile = path.join(dir, `${overlay}-proxy.yaml`);
      await writeFile(configFile, String(o(find(objects, 'ConfigMap', 'actor-edge-proxy-config').data)['proxy.yaml']));
      const proxy = proxyConfigOf(['--config', configFile], containerEnv(containers(deployment)[0] as JsonObject));
      const egress = proxy?.egressListener;
      assert.ok(egress, `${overlay}: the proxy runs its egress listener`);
      assert.equal(egress.listen.host, '0.0.0.0');
      const port = a(containers(deployment)[0]?.ports).map(o).find((p) => p.name === 'egress');
      assert.equal(port?.containerPort, egress.listen.port, `${overlay}: the container's egress port is the listener's`);

      const svc = find(objects, 'Service', 'actor-edge-egress');
      const spec = o(svc.spec);
      assert.equal(spec.type, 'ClusterIP', 'actors reach it from inside the cluster only');
      assert.deepEqual(spec.selector, o(o(deployment.spec).selector).matchLabels);
      assert.deepEqual(a(spec.ports).map(o), [{ name: 'egress', port: 443, targetPort: 'egress', protocol: 'TCP' }]);
      const publicTargets = a(o(find(objects, 'Service', 'actor-edge-proxy').spec).ports).map((p) => o(p).targetPort);
      assert.ok(!publicTargets.includes('egress') && !publicTargets.includes(egress.listen.port), `${overlay}: the public load balancer does not carry the egress listener`);

      assert.equal(secretHolding(deployment, egress.tls.certFile), 'actor-edge-egress-tls');
      assert.equal(secretHolding(deployment, egress.tls.keyFile), 'actor-edge-egress-tls');
      assert.equal(secretHolding(deployment, egress.clientCaFile), 'actor-edge-actor-ca');
      // The signer (the actor identity CA with its key) is mounted only where actor certificates are minted.
      for (const d of objects.filter((x) => x.kind === 'Deployment')) {
        const signer = a(podSpec(d).volumes).map(o).some((v) => o(v.secret).secretName === 'actor-edge-actor-ca-signer');
        assert.equal(signer, overlay === 'dev' && d.metadata.name === 'actor-edge-control-plane', `${overlay}: ${d.metadata.name} mounts the actor identity CA's key`);
      }
    }
    // dev: the stub mints from the files its --actor-ca-dir expects, read from that Secret.
    const stub = find(rendered.dev, 'Deployment', 'actor-edge-control-plane');
    const args = a(containers(stub)[0]?.args).map(String);
    const caDir = args[args.indexOf('--actor-ca-dir') + 1] as string;
    const stubConfig = readStubConfig(args.slice(1), containerEnv(containers(stub)[0] as JsonObject));
    assert.equal(stubConfig.kind === 'config' ? stubConfig.config.actorCaDir : undefined, caDir);
    assert.equal(secretHolding(stub, path.join(caDir, 'actor-ca.key')), 'actor-edge-actor-ca-signer');
    const items = o(a(podSpec(stub).volumes).map(o).find((v) => o(v.secret).secretName === 'actor-edge-actor-ca-signer')?.secret).items;
    assert.deepEqual(a(items).map(o), [{ key: 'tls.crt', path: 'actor-ca.pem' }, { key: 'tls.key', path: 'actor-ca.key' }]);
    assert.equal(o(podSpec(stub).securityContext).fsGroup, 1000, 'the Secret\'s files (0440) are readable by the stub\'s group');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('production: the ext_proc hop is mTLS on both ends, each end\'s bundles from its own Secret, each peer accepted by the SPIFFE ID of its service account', async () => {
  const objects = rendered.production;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'actor-edge-manifests-'));
  try {
    const configFile = path.join(dir, 'proxy.yaml');
    await writeFile(configFile, String(o(find(objects, 'ConfigMap', 'actor-edge-proxy-config').data)['proxy.yaml']));
    const proxyDeployment = find(objects, 'Deployment', 'actor-edge-proxy');
    const extprocDeployment = find(objects, 'Deployment', 'actor-edge-extproc');
    const proxy = proxyConfigOf(['--config', configFile], containerEnv(containers(proxyDeployment)[0] as JsonObject));
    const extprocArgs = a((containers(extprocDeployment)[0] as JsonObject).args).map(String).slice(1);
    const extproc = extprocConfigOf(extprocArgs, containerEnv(containers(extprocDeployment)[0] as JsonObject));

    const client = proxy?.extProc.tls;
    assert.ok(client, 'the proxy dials extproc with mTLS');
    assert.equal(secretHolding(proxyDeployment, client.credentialBundle), 'actor-edge-proxy-extproc-client');
    assert.equal(secretHolding(proxyDeployment, client.trustBundle), 'actor-edge-proxy-extproc-client');
    const server = extproc?.listenTls;
    assert.ok(server, "extproc's ext_proc listener requires mTLS");
    assert.equal(secretHolding(extprocDeployment, server.credentialBundle), 'actor-edge-extproc-server');
    assert.equal(secretHolding(extprocDeployment, server.clientCa), 'actor-edge-extproc-server');

    // Exact identities, as SPIRE (or a cert-manager Certificate following the same scheme) issues them.
    const spiffeOf = (d: ManifestObject): string => `/ns/${d.metadata.namespace}/sa/${String(podSpec(d).serviceAccountName)}`;
    assert.equal(client.serverIdentity.kind, 'id');
    assert.ok(client.serverIdentity.text.endsWith(spiffeOf(extprocDeployment)), `the proxy expects extproc's identity: ${client.serverIdentity.text}`);
    assert.equal(server.clientIdentity.kind, 'id');
    assert.ok(server.clientIdentity.text.endsWith(spiffeOf(proxyDeployment)), `extproc expects the proxy's identity: ${server.clientIdentity.text}`);
    assert.equal(new URL(client.serverIdentity.text).host, new URL(server.clientIdentity.text).host, 'one trust domain');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
