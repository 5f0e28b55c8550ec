/** The resolver slice of the proxy's config. */
import type { HostPort } from '../../../lib/address.js';

/** Who resolves a cache miss: `extproc` (production), or `apiserver` (the benchmark's comparison: ResumeActor from the proxy). */
export interface ResolverConfig {
  readonly kind: 'extproc' | 'apiserver';
  /** The control plane (`apiserver` only). */
  readonly apiserver: HostPort;
  /** The port every worker listens on (`apiserver` only: it builds the worker address). */
  readonly workerPort: number;
}
