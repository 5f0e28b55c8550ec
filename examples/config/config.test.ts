import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { CLI_SCRIPT } from '../../cli/launch-component.js';
import { writeTemporaryDevCertificates } from '../../lib/tls/dev-certs.js';
import { runScript } from '../../lib/testing/run-script.js';

/** The repository root (this file runs as dist/examples/config/config.test.js). */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const example = (name: string): string => path.join(ROOT, 'examples/config', name);
const validate = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runScript(CLI_SCRIPT, ['validate', ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });

const certs = writeTemporaryDevCertificates('actor-edge-example-config-', { workers: 0, days: 2 });
after(async () => (await certs).remove());

test('every example config follows the published JSON Schema (what an editor checks)', () => {
  const schema = JSON.parse(readFileSync(path.join(ROOT, 'schema/proxy.schema.json'), 'utf8')) as object;
  const check = new Ajv({ allErrors: true, allowUnionTypes: true }).compile(schema);
  for (const name of ['minimal.yaml', 'production.yaml']) {
    const doc = parse(readFileSync(example(name), 'utf8')) as unknown;
    assert.ok(check(doc), `${name}: ${JSON.stringify(check.errors)}`);
  }
});

test('examples/config/minimal.yaml validates as it is', async () => {
  const r = await validate(['--config', 'examples/config/minimal.yaml']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^proxy configuration is valid \(examples\/config\/minimal\.yaml\)\n\nwould run:/);
  assert.match(r.stdout, /chain +actor-cache .* → ext-proc 127\.0\.0\.1:50051 → router/);
});

test('examples/config/production.yaml validates with its files in place (here: flags and a variable point at them)', async () => {
  const { files } = await certs;
  const overrides = ['--tls-cert', files.ingress, '--tls-key', files.ingress, '--upstream-credential-bundle', files.proxy, '--upstream-trust-bundle', files.ca];
  const r = await validate(['--config', 'examples/config/production.yaml', ...overrides], { PROXY_ADMIN_TOKEN: 'an-admin-token' });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /https +0\.0\.0\.0:8443 \(ALPN h2, http\/1\.1\) \(certificate .*proxy-ingress\.pem.*reloaded when they change\)/);
  assert.match(r.stdout, /chain +cors \(.*dist\/examples\/cors\.js\) → error-pages \(.*dist\/examples\/error-pages\.js\) → actor-cache/);
  assert.match(r.stdout, /upstream +mTLS to the workers as spiffe:\/\/cluster\.local\/ns\/actor-edge\/sa\/proxy, accepting spiffe:\/\/cluster\.local\/ns\/actor-edge\/worker\//);
  assert.match(r.stdout, /state-changing calls need the admin token/);
  assert.match(r.stdout, /processes +2 ingress workers/);
  assert.match(r.stdout, /"origins": \[\n\s+"https:\/\/app\.example\.com"/, 'the filter options as given');
  // Without the overrides it names, in one run, every production file this machine lacks, by its key in the file.
  const bare = await validate(['--config', 'examples/config/production.yaml']);
  assert.equal(bare.code, 1);
  for (const line of [
    'admin.token: file not found: /run/secrets/actor-edge-admin-token',
    'listeners.tlsCert: file not found: /etc/actor-edge/tls/ingress.pem',
    'listeners.tlsKey: file not found: /etc/actor-edge/tls/ingress.pem',
    'upstream.credentialBundle: file not found: /etc/actor-edge/tls/proxy.pem',
    'upstream.trustBundle: file not found: /etc/actor-edge/tls/ca.pem',
  ]) assert.ok(bare.stderr.includes(`  ${line}\n`), bare.stderr);
});
