/**
 * The stack's components in the caller's own process, each from the same flags its process takes (`actor-edge
 * apiserver-stub`, `extproc`, `proxy`): what the test kit's stack runs, and what the repository's own tests start
 * (their harness re-exports these). A component reads no environment but the one it is handed, and logs into
 * memory (`logs()`), never to the test's output.
 */
import { UsageError } from '../lib/flags.js';
import { collectingLogger } from '../lib/collecting-logger.js';
import { readStubConfig } from '../apiserver-stub/config.js';
import { startApiserverStub, type RunningStub } from '../apiserver-stub/stub.js';
import { readExtprocConfig } from '../extproc/config.js';
import { startExtproc, type RunningExtproc } from '../extproc/server.js';
import { proxyConfigOf } from '../proxy/config.js';
import { startProxyProcess, type AssembleStages, type ProcessOptions, type RunningProxy } from '../proxy/proxy-process.js';
import { assembleStages } from '../proxy/stages/assemble.js';
import { checkProxyFiles } from '../proxy/startup-checks.js';

/** A component started in this process: the addresses its ready line would carry, its log lines, and `stop()`. */
export interface InProcessComponent {
  readonly addresses: Readonly<Record<string, string>>;
  logs(): Record<string, unknown>[];
  /** Stops it (as SIGTERM would: a drain, then everything closed). */
  stop(): Promise<void>;
}

export interface InProcessStub extends InProcessComponent {
  readonly running: RunningStub;
}

export interface InProcessExtproc extends InProcessComponent {
  readonly running: RunningExtproc;
}

/** Starts apiserver-stub (and its workers) from `args`. */
export async function startStubInProcess(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<InProcessStub> {
  const read = readStubConfig(args, env);
  if (read.kind === 'help') throw new UsageError('--help is not a stub to start');
  const { log, lines } = collectingLogger('apiserver-stub');
  const running = await startApiserverStub(read.config, log);
  return { running, addresses: running.addresses, logs: () => lines, stop: () => running.close() };
}

/** Starts extproc from `args`. */
export async function startExtprocInProcess(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<InProcessExtproc> {
  const read = readExtprocConfig(args, env);
  if (read.kind === 'help') throw new UsageError('--help is not an extproc to start');
  const { log, lines } = collectingLogger('extproc');
  const running = await startExtproc(read.config, log);
  return { running, addresses: { grpc: running.grpcAddress, admin: running.adminAddress }, logs: () => lines, stop: () => running.close() };
}

export interface InProcessProxyOptions {
  /** The stages (default: the production assembly: the `--filter` modules, actor-cache, ext-proc, the router). */
  readonly assemble?: AssembleStages;
  /** The overload monitors' readings and sampling interval. */
  readonly overload?: ProcessOptions['overload'];
}

export interface InProcessProxy {
  readonly running: RunningProxy;
  /** Its log lines and its access-log lines (whatever `--access-log` names), in order. */
  logs(): Record<string, unknown>[];
  stop(): Promise<void>;
}

/**
 * Starts the proxy as `actor-edge proxy --workers 1` does (`main.ts`): the files checked first, a reload reading
 * the flags (and the config file) again; as a cluster worker (no signal handlers, no ready line).
 */
/**
 * The overload monitors, off unless `args` turn them on (a later flag wins): in the caller's process they would read
 * the caller's own load (its clients, floods, the other components) as the proxy's, and shed its requests.
 */
const OVERLOAD_OFF: readonly string[] = ['--overload-loop-delay-ms', '0', '--overload-loop-delay-critical-ms', '0', '--overload-heap-bytes', '0', '--overload-heap-critical-bytes', '0'];

export async function startProxyInProcess(args: readonly string[], env: NodeJS.ProcessEnv = {}, opts: InProcessProxyOptions = {}): Promise<InProcessProxy> {
  const flags = [...OVERLOAD_OFF, ...args];
  const config = proxyConfigOf(flags, env);
  if (config.workers > 1) throw new UsageError(`--workers ${config.workers} is node:cluster, processes: an in-process proxy is one worker`);
  checkProxyFiles(config);
  const { log, lines } = collectingLogger('proxy');
  const collect = { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) };
  const rereadConfig = () => proxyConfigOf(flags, env);
  const running = await startProxyProcess(config, opts.assemble ?? assembleStages, {
    role: 'worker',
    log,
    rereadConfig,
    accessLogSink: collect,
    ...(opts.overload === undefined ? {} : { overload: opts.overload }),
  });
  return { running, logs: () => lines, stop: () => running.close() };
}
