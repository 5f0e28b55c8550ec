/** The ext-proc stage's slice of the proxy's config. */
import type { HostPort } from '../../../lib/address.js';
import type { ExtProcSettings } from './settings.js';

/** `--extproc` and Envoy's ExternalProcessor settings (`settings.ts`). */
export interface ExtProcStageConfig {
  readonly address: HostPort;
  readonly settings: ExtProcSettings;
}
