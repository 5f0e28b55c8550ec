#!/usr/bin/env node
/**
 * `actor-edge <component> [flags]`: the one entry point for every process the project runs.
 * Each component module exports `main(argv)`; modules are imported lazily so a component loads only its own code.
 */
import { UsageError } from './flags.js';

interface Component {
  readonly summary: string;
  readonly load: () => Promise<{ main(argv: string[]): Promise<void> }>;
}

const COMPONENTS: Readonly<Record<string, Component>> = Object.freeze({
  proxy: { summary: 'the ingress proxy (actor-cache → ext-proc → router)', load: () => import('../proxy/main.js') },
  extproc: { summary: 'the Envoy ext_proc v3 server that resolves actors through ResumeActor', load: () => import('../extproc/main.js') },
  'apiserver-stub': { summary: 'a simulated ateapi control plane with in-process workers', load: () => import('../apiserver-stub/main.js') },
  worker: { summary: 'a simulated worker that attaches to apiserver-stub', load: () => import('../apiserver-stub/worker-main.js') },
});

function usage(): string {
  const rows = Object.entries(COMPONENTS).map(([name, c]) => `  ${name.padEnd(16)}${c.summary}`);
  return ['Usage: actor-edge <component> [flags]', '', 'Components:', ...rows, '', 'Run `actor-edge <component> --help` for its flags.', ''].join('\n');
}

async function run(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return;
  }
  const component = COMPONENTS[name];
  if (!component) throw new UsageError(`unknown component "${name}"\n\n${usage()}`);
  const mod = await component.load();
  await mod.main(rest);
}

run(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`actor-edge: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`actor-edge: ${(err as Error)?.stack ?? String(err)}\n`);
  process.exit(1);
});
