/**
 * `actor-edge validate` and `--version`: what it prints and its exit code. The table of configurations is checked
 * with the CLI's own validation in the test's process (its exit code and the text it writes to each stream); a few
 * runs of the CLI as a process check that those become the process's exit code and output.
 * Needs processes: the exit code and the two output streams of the CLI's process are what is tested.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CLI_SCRIPT } from './launch-component.js';
import { runScript, type ScriptRun } from '../lib/testing/run-script.js';
import { runValidate } from './validate.js';

const PACKAGE = JSON.parse(readFileSync(path.join(path.dirname(CLI_SCRIPT), '../../package.json'), 'utf8')) as { version: string };
let dir = '';
const file = (name: string, text: string): string => {
  const f = path.join(dir, name);
  writeFileSync(f, text);
  return f;
};
const cli = (args: string[], env: NodeJS.ProcessEnv = {}) => runScript(CLI_SCRIPT, args, { env: { PATH: process.env.PATH ?? '', ...env } });
/** `actor-edge validate ARGS` in the test's process: the exit code the CLI would exit with, and what it would print. */
async function validate(args: string[], env: NodeJS.ProcessEnv = {}): Promise<ScriptRun> {
  let stdout = '';
  let stderr = '';
  const code = await runValidate(args, env, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

before(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'validate-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

// Side by side: each test runs its own CLI processes or validations on its own files.
describe('actor-edge validate and --version', { concurrency: true }, () => {
  test('--version prints the package and Node.js versions, for the CLI and for each component', async () => {
    for (const args of [['--version'], ['proxy', '--version'], ['extproc', '--listen', 'x:1', '--version'], ['certs', '--version']]) {
      const r = await cli(args);
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, `actor-edge ${PACKAGE.version} (Node.js ${process.version})\n`);
    }
  });

  test('validate: a good config exits 0 and prints what it would run, without binding its listeners', async () => {
    const held = net.createServer();
    await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
    const port = (held.address() as net.AddressInfo).port;
    try {
      const config = file('ok.yaml', `listeners:\n  http: 127.0.0.1:${port}\nadmin:\n  listen: 127.0.0.1:${port}\n  token: hunter2\ncache:\n  ttlMs: 2000\n`);
      const r = await cli(['validate', '--config', config]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^proxy configuration is valid \(.*ok\.yaml\)\n/);
      assert.match(r.stdout, new RegExp(`http +127\\.0\\.0\\.1:${port} \\(HTTP/1\\.1 and h2c\\)`));
      assert.match(r.stdout, /chain +actor-cache \(TTL 2000 ms, 100000 entries\) → ext-proc 127\.0\.0\.1:50051 → router/);
      assert.match(r.stdout, /"cache": \{\n    "enabled": true,\n    "ttlMs": 2000,/);
      assert.doesNotMatch(r.stdout, /hunter2/, 'secrets are not printed');
      assert.match(r.stdout, /"adminToken": "\(set\)"/);
    } finally {
      held.close();
    }
  });

  test('validate: a misspelled key exits 1 naming the field and the key it should be', async () => {
    const r = await cli(['validate', '--config', file('typo.yaml', 'cache:\n  ttlMS: 5\n')]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /actor-edge validate: proxy configuration is not valid: config file .*typo\.yaml: unknown field "cache\.ttlMS" \(did you mean cache\.ttlMs\?\)/);
  });

  test('validate: a wrong type exits 1 naming the field', async () => {
    const r = await validate(['--config', file('type.yaml', 'upstream:\n  connectTimeoutMs: soon\n')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /type\.yaml: upstream\.connectTimeoutMs: must be integer/);
    const flag = await validate(['--connect-timeout-ms', 'soon']);
    assert.equal(flag.code, 1, 'a flag is checked the same way');
    assert.match(flag.stderr, /--connect-timeout-ms: expected a number, got "soon"/);
  });

  test('validate: a filter module that throws at import exits 1 naming the module', async () => {
    const module = file('broken-filter.mjs', 'throw new Error("no database configured");\nexport default () => ({ name: "never" });\n');
    const r = await validate(['--config', file('filters.yaml', 'chain:\n  filters:\n    - module: ./broken-filter.mjs\n')]);
    assert.equal(r.code, 1);
    assert.ok(r.stderr.includes(`filter ${module}: cannot load module: no database configured`), r.stderr);
    const good = file('good-filter.mjs', 'export default ({ options }) => ({ name: `tag-${options.tag}` });\n');
    const ok = await validate(['--config', file('good.yaml', 'chain:\n  filters:\n    - { module: ./good-filter.mjs, options: { tag: a } }\n')]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.ok(ok.stdout.includes(`tag-a (${good}) → actor-cache`), ok.stdout);
  });

  test('validate: a certificate file that does not exist exits 1 naming the file', async () => {
    const missing = path.join(dir, 'absent.pem');
    const r = await validate(['--config', file('tls.yaml', `listeners:\n  https: 127.0.0.1:0\n  tlsCert: ${missing}\n  tlsKey: ${missing}\n`)]);
    assert.equal(r.code, 1);
    assert.ok(r.stderr.includes(`  listeners.tlsCert: file not found: ${missing}\n`), r.stderr);
    const bundle = await validate(['--upstream-credential-bundle', missing], { PROXY_UPSTREAM_TRUST_BUNDLE: missing });
    assert.equal(bundle.code, 1);
    assert.ok(bundle.stderr.includes(`  --upstream-credential-bundle: file not found: ${missing}\n`), bundle.stderr);
    assert.ok(bundle.stderr.includes(`  PROXY_UPSTREAM_TRUST_BUNDLE: file not found: ${missing}\n`), bundle.stderr);
    const extproc = await validate(['extproc', '--apiserver-ca', missing, '--apiserver-credential-bundle', missing, '--apiserver', 'cp.example:1']);
    assert.equal(extproc.code, 1);
    // extproc (and the stub and the worker) report every file in one run too.
    assert.ok(extproc.stderr.includes(`  --apiserver-ca: file not found: ${missing}\n`), extproc.stderr);
    assert.ok(extproc.stderr.includes(`  --apiserver-credential-bundle: file not found: ${missing}\n`), extproc.stderr);
    const stub = await validate(['apiserver-stub', '--tls-credential-bundle', missing, '--tls-client-ca', missing, '--worker-tls-credential-bundle', missing, '--worker-tls-client-ca', missing, '--worker-tls-client-identity', 'spiffe://demo/proxy']);
    assert.equal(stub.code, 1);
    assert.match(stub.stderr, /apiserver-stub configuration is not valid, 4 problems:/);
  });

  test('validate: every problem in one run, each named where it was set (the file\'s key, a flag, a variable)', async () => {
    const absent = (name: string): string => path.join(dir, name);
    const config = file(
      'three.yaml',
      `listeners:\n  https: 127.0.0.1:0\n  tlsCert: ${absent('cert.pem')}\n  tlsKey: ${absent('key.pem')}\nadmin:\n  token: { file: ${absent('token')} }\n`,
    );
    const r = await validate(['--config', config, '--cache-ttl-ms', 'soon'], { PROXY_WORKERS: 'two' });
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      [
        `actor-edge validate: proxy configuration is not valid (${config}), 5 problems:`,
        `  admin.token: file not found: ${absent('token')}`,
        '  --cache-ttl-ms: expected a number, got "soon"',
        '  PROXY_WORKERS: expected a number, got "two"',
        `  listeners.tlsCert: file not found: ${absent('cert.pem')}`,
        `  listeners.tlsKey: file not found: ${absent('key.pem')}`,
        '',
      ].join('\n'),
    );
  });

  test('validate: every component with a configuration; an unknown one is a usage error', async () => {
    for (const [component, args] of [['extproc', []], ['apiserver-stub', ['--workers', '2']], ['worker', ['--advertise-ip', '127.0.2.1']]] as const) {
      const r = await validate([component, ...args]);
      assert.equal(r.code, 0, `${component}: ${r.stderr}`);
      assert.match(r.stdout, new RegExp(`^${component} configuration is valid \\(no config file\\)`));
    }
    const worker = await validate(['worker']);
    assert.equal(worker.code, 1);
    assert.match(worker.stderr, /--advertise-ip \(WORKER_ADVERTISE_IP\) is required/);
    const unknown = await cli(['validate', 'certs']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /"certs" has no configuration to check/);
  });

  test('validate: deprecated names are reported as warnings, and the config still passes', async () => {
    const r = await validate(['--config', file('flat.yaml', 'cache-ttl-ms: 700\n')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /warning: config file .*flat\.yaml: "cache-ttl-ms" at the top level is deprecated: use cache\.ttlMs/);
    assert.match(r.stdout, /"ttlMs": 700,/);
  });
});
