import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';
import { planProblems } from './plan-check.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const COMPOSE = readFileSync(path.join(ROOT, 'compose.yaml'), 'utf8');

type Doc = {
  services: Record<string, { command: string[]; environment: Record<string, string>; depends_on: Record<string, unknown>; volumes: string[]; ports: string[]; networks: Record<string, unknown> }>;
};

/** compose.yaml with one change. */
function changed(edit: (doc: Doc) => void): string {
  const doc = parse(COMPOSE, { merge: true }) as Doc;
  edit(doc);
  return stringify(doc);
}

test('compose.yaml follows the stack plan: its components, their wiring, start order, mTLS variables and identities; its mounts and egress are what they need', () => {
  assert.deepEqual(planProblems(COMPOSE), []);
});

test('the check catches a drift in each of them', () => {
  const cases: [string, (doc: Doc) => void, RegExp][] = [
    ['extproc wired elsewhere', (d) => void (d.services.extproc!.command[d.services.extproc!.command.indexOf('--apiserver') + 1] = 'elsewhere:50052'), /extproc: --apiserver elsewhere:50052 is not a name of apiserver/],
    ['the proxy without ext_proc', (d) => void d.services.proxy!.command.splice(d.services.proxy!.command.indexOf('--extproc'), 2), /proxy: no --extproc/],
    ['a lost start order', (d) => void delete d.services.proxy!.depends_on.extproc, /proxy: starts without waiting for extproc/],
    ['a hop without its TLS variable', (d) => void delete d.services.extproc!.environment.EXTPROC_TLS_CLIENT_CA, /extproc: EXTPROC_TLS_CLIENT_CA missing/],
    ['a wrong identity', (d) => void (d.services.proxy!.environment.PROXY_EXTPROC_SPIFFE_ID = 'spiffe://cluster.local/ns/actor-edge/sa/other'), /proxy: PROXY_EXTPROC_SPIFFE_ID is .*other/],
    ['a worker without mTLS', (d) => void delete d.services['worker-2']!.environment.WORKER_TLS_CLIENT_IDENTITY, /worker-2: WORKER_TLS_CLIENT_IDENTITY missing/],
    ['a component gone', (d) => void delete d.services.extproc, /extproc: no service runs it/],
  ];
  for (const [name, edit, expected] of cases) {
    const problems = planProblems(changed(edit));
    assert.ok(problems.some((p) => expected.test(p)), `${name}: ${JSON.stringify(problems)}`);
  }
});

/** A service's volumes without the one whose text contains `file`. */
const without = (volumes: string[], file: string): string[] => volumes.filter((v) => !v.includes(file));

test('the mount and egress checks catch each drift', () => {
  const cases: [string, (doc: Doc) => void, RegExp][] = [
    ['no egress listener', (d) => void delete d.services.proxy!.environment.PROXY_EGRESS_LISTEN, /proxy: no egress listener \(PROXY_EGRESS_LISTEN\)/],
    ['its port not published', (d) => void (d.services.proxy!.ports = d.services.proxy!.ports.filter((p) => !p.endsWith(':9443'))), /proxy: the egress listener's port 9443 is not published/],
    ['actors checked against the workload CA', (d) => void (d.services.proxy!.environment.PROXY_EGRESS_CLIENT_CA = '/certs/ca.pem'), /proxy: PROXY_EGRESS_CLIENT_CA is not the mounted actor identity CA \(actor-ca\.pem\), but .*\/ca\.pem/],
    ['the egress listener serving the ingress certificate', (d) => void (d.services.proxy!.environment.PROXY_EGRESS_TLS_CERT = '/certs/proxy-ingress.pem'), /proxy: PROXY_EGRESS_TLS_CERT is not the mounted proxy-egress\.pem/],
    ['a variable naming a file not mounted', (d) => void (d.services.proxy!.volumes = without(d.services.proxy!.volumes, 'proxy-egress.pem')), /proxy: PROXY_EGRESS_TLS_CERT names \/certs\/proxy-egress\.pem, which is not mounted into it/],
    ['a writable certificate', (d) => void (d.services.apiserver!.volumes = d.services.apiserver!.volumes.map((v) => v.replace('control-plane.pem:ro', 'control-plane.pem'))), /apiserver: \/certs\/control-plane\.pem is mounted writable/],
    ['the actor identity CA key in the proxy', (d) => void d.services.proxy!.volumes.push('${ACTOR_EDGE_CERTS:-./certs}/actor-ca.key:/certs/actor-ca.key:ro'), /proxy: mounts the actor identity CA's key/],
    ['the development CA key anywhere', (d) => void d.services.extproc!.volumes.push('./certs/ca.key:/certs/ca.key:ro'), /extproc: mounts the development CA's key/],
    ['the stub without the key it mints with', (d) => void (d.services.apiserver!.volumes = without(d.services.apiserver!.volumes, 'actor-ca.key')), /apiserver: \/certs\/actor-ca\/actor-ca\.key is not mounted from actor-ca\.key/],
    ['the key beside, not in, --actor-ca-dir', (d) => void (d.services.apiserver!.environment.APISERVER_ACTOR_CA_DIR = '/certs/elsewhere'), /apiserver: the actor identity CA's key is mounted at \/certs\/actor-ca\/actor-ca\.key, not in --actor-ca-dir \/certs\/elsewhere/],
    ['destinations the proxy cannot reach', (d) => void delete d.services.proxy!.networks.outside, /apiserver: destination-1 is on network outside, which proxy does not join/],
    ['a destination on no fixed address', (d) => void (d.services.apiserver!.environment.APISERVER_DESTINATIONS = '127.0.0.2:8000,127.0.0.2:8001'), /apiserver: destination-1 127\.0\.0\.2:8000 is not the stub's fixed address/],
    ['a policy that lets the second destination through', (d) => void (d.services.apiserver!.environment.APISERVER_SEED_EGRESS_POLICIES = '{"*":{"rules":[{"kind":"all","ports":"all"}]}}'), /apiserver: the seeded policies allow actor-000 destination-2/],
    ['no policy at all', (d) => void delete d.services.apiserver!.environment.APISERVER_SEED_EGRESS_POLICIES, /apiserver: the seeded policies do not allow actor-000 destination-1/],
    ['flags the stub refuses', (d) => void (d.services.apiserver!.environment.APISERVER_DESTINATIONS = '0.0.0.0:8000'), /apiserver: its command and environment do not parse: .*0\.0\.0\.0:8000/],
  ];
  for (const [name, edit, expected] of cases) {
    const problems = planProblems(changed(edit));
    assert.ok(problems.some((p) => expected.test(p)), `${name}: ${JSON.stringify(problems)}`);
  }
});
