/** Every command's flag set, in docs/reference/flags.md's order: what `npm run docs` and its test generate from. */
import type { FlagSet } from '../lib/flags.js';
import { PROXY_FLAG_SET } from '../proxy/config.js';
import { EXTPROC_FLAG_SET } from '../extproc/config.js';
import { STUB_FLAG_SET } from '../apiserver-stub/config.js';
import { WORKER_FLAG_SET } from '../apiserver-stub/worker/config.js';
import { CERTS_FLAG_SET } from '../lib/tls/certs-main.js';
import { CERTS_ACTOR_FLAG_SET } from '../lib/tls/certs-actor-main.js';

export const FLAG_SETS: readonly FlagSet[] = [PROXY_FLAG_SET, EXTPROC_FLAG_SET, STUB_FLAG_SET, WORKER_FLAG_SET, CERTS_FLAG_SET, CERTS_ACTOR_FLAG_SET];

/** The flag sets read from a config file too (they declare `--config`): each has a JSON Schema in schema/. */
export const CONFIG_FILE_SETS: readonly FlagSet[] = FLAG_SETS.filter((set) => 'config' in set.flags);
