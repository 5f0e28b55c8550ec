/**
 * Every component `actor-edge <component>` can run. Each component module exports `main(argv)`; modules are
 * imported lazily so a process loads only its own component's code.
 */

export interface Component {
  readonly summary: string;
  readonly load: () => Promise<{ main(argv: string[]): Promise<void> }>;
}

export const COMPONENTS: Readonly<Record<string, Component>> = Object.freeze({
  proxy: { summary: 'the ingress proxy (actor-cache → ext-proc → router)', load: () => import('../proxy/main.js') },
  extproc: { summary: 'the Envoy ext_proc v3 server that resolves actors through ResumeActor', load: () => import('../extproc/main.js') },
  'apiserver-stub': { summary: 'a simulated ateapi control plane with in-process workers', load: () => import('../apiserver-stub/main.js') },
  worker: { summary: 'a simulated worker that attaches to apiserver-stub', load: () => import('../apiserver-stub/worker-main.js') },
  certs: { summary: 'writes a development CA and the mTLS identities of every hop', load: () => import('../lib/tls/certs-main.js') },
});
