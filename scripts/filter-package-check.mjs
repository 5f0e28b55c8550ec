// The filter author's path, from the package as npm would ship it, in a scratch folder (CI runs it after
// `npm test`, on the build that left in dist/):
//   1. `npm pack` this repository;
//   2. the tarball's own CLI writes a project: `actor-edge new-filter hello-edge --actor-edge file:<tarball>`;
//   3. one install, offline: the tarball, TypeScript and Node's types from the npm cache (a lockfile built from
//      this repository's, see offline-lock.mjs);
//   4. `npm test` in the project: its build, its unit test and its end-to-end test (actor-edge/testing);
//   5. the installed CLI runs apiserver-stub, extproc and `actor-edge proxy --filter dist/hello-edge.js` as
//      processes, and a request through that proxy must come back with the filter's header.
// Exit 0 when all of it works; otherwise the failing step's output and exit 1. `--keep` leaves the folder.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { offlineLock } from './offline-lock.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NAME = 'hello-edge';
const keep = process.argv.includes('--keep');

const { launch } = await import(pathToFileURL(path.join(ROOT, 'dist/lib/launch.js')).href);
const { workerNet } = await import(pathToFileURL(path.join(ROOT, 'dist/lib/loopback.js')).href);

const step = (what) => process.stdout.write(`\n--- filter-package-check: ${what}\n`);
function run(cmd, args, cwd) {
  process.stdout.write(`$ ${cmd} ${args.join(' ')}\n`);
  execFileSync(cmd, args, { cwd, stdio: 'inherit', env: { ...process.env, npm_config_update_notifier: 'false' } });
}

if (!existsSync(path.join(ROOT, 'dist/cli/main.js'))) {
  console.error('filter-package-check: dist/ is not built (npm run build first)');
  process.exit(1);
}

const scratch = mkdtempSync(path.join(tmpdir(), 'filter-package-'));
const stops = [];
try {
  // dist/ is this build's (npm test just compiled it): the pack skips `prepare`, which would compile it again.
  step('npm pack');
  run('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', scratch], ROOT);
  const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  const tarball = path.join(scratch, `${manifest.name}-${manifest.version}.tgz`);

  step(`actor-edge new-filter ${NAME}, by the tarball's CLI`);
  run('tar', ['xzf', tarball, '-C', scratch], scratch);
  run('node', [path.join(scratch, 'package/dist/cli/main.js'), 'new-filter', NAME, '--actor-edge', `file:${path.basename(tarball)}`], scratch);
  const project = path.join(scratch, NAME);

  step('npm ci --offline (the tarball, typescript, @types/node from the npm cache)');
  const lock = offlineLock({
    project: JSON.parse(readFileSync(path.join(project, 'package.json'), 'utf8')),
    projectDir: project,
    tarball,
    manifest,
    repoLock: JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')),
  });
  writeFileSync(path.join(project, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
  run('npm', ['ci', '--offline', '--no-audit', '--no-fund', '--loglevel', 'error'], project);

  step('npm test in the project (its build, unit test and end-to-end test)');
  run('npm', ['test'], project);

  step(`actor-edge proxy --filter dist/${NAME}.js, with extproc and apiserver-stub, as processes`);
  const cli = path.join(project, 'node_modules/actor-edge/dist/cli/main.js');
  const start = async (component, args) => {
    const c = await launch(component, cli, [component, '--listen', '127.0.0.1:0', '--admin', '127.0.0.1:0', ...args]);
    stops.push(c);
    return c.addresses;
  };
  const { ipBase, port } = await workerNet();
  const stub = await start('apiserver-stub', ['--workers', '1', '--worker-ip-base', ipBase, '--worker-port', String(port), '--actors', '2']);
  const extproc = await start('extproc', ['--apiserver', stub.grpc, '--worker-port', String(port)]);
  const proxy = await start('proxy', ['--extproc', extproc.grpc, '--filter', path.join(project, 'dist', `${NAME}.js`)]);
  const [host, ingressPort] = [proxy.ingress.slice(0, proxy.ingress.lastIndexOf(':')), proxy.ingress.slice(proxy.ingress.lastIndexOf(':') + 1)];
  const answer = await new Promise((resolve, reject) => {
    const req = http.request({ host, port: Number(ingressPort), path: '/check', headers: { host: 'actor-000.demo.actors.resources.substrate.ate.dev' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, header: res.headers[`x-${NAME}`] }));
    });
    req.on('error', reject);
    req.end();
  });
  console.log(`GET /check through the proxy: ${answer.status}, x-${NAME}: ${answer.header}`);
  if (answer.status !== 200 || answer.header !== 'hello') throw new Error(`expected 200 with x-${NAME}: hello`);
  console.log('\nfilter-package-check: passed');
} catch (err) {
  console.error(`\nfilter-package-check: FAILED: ${err.message}`);
  process.exitCode = 1;
} finally {
  for (const c of stops.reverse()) await c.stop().catch(() => undefined);
  if (keep) console.log(`kept ${scratch}`);
  else rmSync(scratch, { recursive: true, force: true });
}
