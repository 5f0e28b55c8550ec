/**
 * The files `actor-edge new-filter NAME` writes: a small ES-module TypeScript project whose filter adds a response
 * header, with a unit test and an end-to-end test (`actor-edge/testing`), ready for `npm install && npm test`.
 */

/** The versions the project's package.json asks for. */
export interface ProjectDependencies {
  /** How to get actor-edge: a version range, or a `file:` directory or tarball. */
  readonly actorEdge: string;
  readonly typescript: string;
  readonly typesNode: string;
  /**
   * actor-edge's own `overrides` (a dependency of a dependency pinned to a version that supports Node 20): npm applies
   * only the root project's, so the project carries them to install what actor-edge is tested with.
   */
  readonly overrides?: Readonly<Record<string, unknown>>;
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

function packageJson(name: string, deps: ProjectDependencies): string {
  return json({
    name,
    version: '0.1.0',
    private: true,
    description: `An actor-edge filter: ${name}`,
    // An ES module: the proxy loads the built filter with import(), and the test kit is ESM.
    type: 'module',
    main: `dist/${name}.js`,
    scripts: {
      build: 'tsc -p .',
      test: 'tsc -p . && node --test dist/*.test.js',
    },
    devDependencies: { '@types/node': deps.typesNode, 'actor-edge': deps.actorEdge, typescript: deps.typescript },
    ...(deps.overrides === undefined ? {} : { overrides: deps.overrides }),
  });
}

const TSCONFIG = json({
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2022'],
    types: ['node'],
    strict: true,
    skipLibCheck: true,
    sourceMap: true,
    rootDir: 'src',
    outDir: 'dist',
  },
  include: ['src'],
});

function filterSource(name: string): string {
  return `/**
 * ${name}: adds \`x-${name}\` to every response the client gets (the actor's answers and the proxy's own
 * replies alike). Its value is the \`value\` option (config file: filters: [{ module, options: { value } }]),
 * default "hello".
 */
import type { FilterFactory } from 'actor-edge';

const factory: FilterFactory = ({ options }) => {
  const value = typeof options.value === 'string' ? options.value : 'hello';
  return {
    name: '${name}',
    onResponse(_ctx, response) {
      response.headers.set('x-${name}', value);
    },
  };
};

export default factory;
`;
}

/** The built filter as its test imports it (kept out of the template's text: it is not an import of this file). */
const builtModule = (name: string): string => `./${name}.js`;

function testSource(name: string): string {
  return `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runFilter, startTestStack } from 'actor-edge/testing';
import factory from '${builtModule(name)}';

test('${name} adds x-${name} to the response', async () => {
  const run = await runFilter(factory, { request: { path: '/hello' }, upstream: { status: 200 } });
  assert.equal(run.outcome, 'upstream');
  assert.equal(run.headers['x-${name}'], 'hello');
  const withOption = await runFilter(factory, { options: { value: 'bonjour' } });
  assert.equal(withOption.headers['x-${name}'], 'bonjour');
});

test('through a proxy, extproc and a simulated control plane, the actor\\'s answer carries x-${name}', async () => {
  // The built filter, loaded as \`actor-edge proxy --filter dist/${name}.js\` would load it.
  await using stack = await startTestStack({ filters: [new URL('${builtModule(name)}', import.meta.url)] });
  const answer = await stack.request('actor-000', { path: '/hello' });
  assert.equal(answer.status, 200);
  assert.equal(answer.headers['x-${name}'], 'hello');
  assert.equal(answer.json().actor, 'actor-000');
});
`;
}

function readme(name: string): string {
  return `# ${name}

An actor-edge filter: adds \`x-${name}\` to every response.

\`\`\`sh
npm install
npm test                                      # builds, then the unit and end-to-end tests
\`\`\`

Run it in the local stack (apiserver-stub, extproc and proxy), from the actor-edge clone:
\`npm start -- --filter PATH/${name}/dist/${name}.js\`; in a proxy of your own deployment:
\`npx actor-edge proxy --filter dist/${name}.js --extproc HOST:PORT\`.

\`src/${name}.ts\` is the filter, \`src/${name}.test.ts\` its tests (\`actor-edge/testing\`).
`;
}

/** The project's files by path (relative to its directory, `/`-separated), in the order they are written. */
export function filterProjectFiles(name: string, deps: ProjectDependencies): ReadonlyMap<string, string> {
  return new Map([
    ['package.json', packageJson(name, deps)],
    ['tsconfig.json', TSCONFIG],
    [`src/${name}.ts`, filterSource(name)],
    [`src/${name}.test.ts`, testSource(name)],
    ['README.md', readme(name)],
  ]);
}
