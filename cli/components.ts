/**
 * Every component `actor-edge <component>` can run. Each component module exports `main(argv)`; modules are
 * imported lazily so a process loads only its own component's code. A component with a configuration to check
 * also has a validator for `actor-edge validate <component>`.
 */
import type { ValidConfig } from '../lib/validation.js';

export type Validator = (argv: readonly string[], env: NodeJS.ProcessEnv) => Promise<ValidConfig>;

export interface Component {
  readonly summary: string;
  readonly load: () => Promise<{ main(argv: string[]): Promise<void> }>;
  readonly validator?: () => Promise<Validator>;
}

export const COMPONENTS: Readonly<Record<string, Component>> = Object.freeze({
  proxy: {
    summary: 'the ingress proxy (actor-cache → ext-proc → router)',
    load: () => import('../proxy/main.js'),
    validator: async () => (await import('../proxy/validate.js')).validateProxy,
  },
  extproc: {
    summary: 'the Envoy ext_proc v3 server that resolves actors through ResumeActor',
    load: () => import('../extproc/main.js'),
    validator: async () => (await import('../extproc/validate.js')).validateExtproc,
  },
  'apiserver-stub': {
    summary: 'a simulated ateapi control plane with in-process workers',
    load: () => import('../apiserver-stub/main.js'),
    validator: async () => (await import('../apiserver-stub/validate.js')).validateStub,
  },
  worker: {
    summary: 'a simulated worker that attaches to apiserver-stub',
    load: () => import('../apiserver-stub/worker-main.js'),
    validator: async () => (await import('../apiserver-stub/validate.js')).validateWorker,
  },
  certs: { summary: 'writes a development CA and the mTLS identities of every hop', load: () => import('../lib/tls/certs-main.js') },
});
