/** The ext-proc stage's slice of the proxy's config. */
import type { HostPort } from '../../../lib/address.js';
import type { ExtProcSettings } from './settings.js';

/** `--extproc`, Envoy's ExternalProcessor settings (`settings.ts`), and retrying a stream that could not be opened. */
export interface ExtProcStageConfig {
  readonly address: HostPort;
  readonly settings: ExtProcSettings;
  /** `--extproc-retry-max-waiting`: requests waiting to retry their stream at once, at most (0: never retried). */
  readonly retryMaxWaiting: number;
}
