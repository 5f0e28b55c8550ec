// Mutation testing of the proxy's decision modules (`npm run test:mutation`; not part of `npm test`: it takes
// minutes). Stryker mutates the TypeScript sources in a sandbox, the build compiles them with tsc, and each
// mutant is judged by node's test runner on the decision modules' own unit tests. See MUTATION.md beside this
// file for the last score and why the surviving mutants survive.
const unitTests = [
  'dist/proxy/chain/rerun.test.js',
  'dist/proxy/stages/actor-cache/binding-cache.test.js',
  'dist/proxy/stages/actor-cache/filter.test.js',
  'dist/proxy/edge/ingress-headers.test.js',
  'dist/proxy/http/hop-by-hop.test.js',
  'dist/proxy/http/relayed-headers.test.js',
  'dist/proxy/upstream/outcome.test.js',
];

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: [
    'proxy/chain/rerun.ts',
    'proxy/stages/actor-cache/binding-cache.ts',
    'proxy/stages/actor-cache/filter.ts',
    'proxy/edge/ingress-headers.ts',
    'proxy/http/hop-by-hop.ts',
    'proxy/http/relayed-headers.ts',
    'proxy/upstream/outcome.ts',
  ],
  testRunner: 'command',
  commandRunner: { command: `node --test --test-timeout=60000 ${unitTests.join(' ')}` },
  buildCommand: 'tsc -p .',
  coverageAnalysis: 'off',
  // The instrumented sources do not type-check; @ts-nocheck (Stryker's default for .ts) lets tsc emit them.
  disableTypeChecks: true,
  ignorePatterns: ['dist', 'bench/results', '.stryker-tmp', 'reports'],
  concurrency: 2,
  timeoutMS: 30_000,
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
