/**
 * The primary's worker table: forks the proxy workers, learns their addresses, replaces a worker that dies
 * (after start-up; during start-up a death fails the start; a crash loop is slowed down: `replacement-delay.ts`),
 * and drains them all at shutdown.
 */
import { StartFailure } from '../../lib/start-failure.js';
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../../lib/logger.js';
import { LISTENING, type ListeningMessage } from './messages.js';
import { drainWorkers } from './drain.js';
import { DEATH_WINDOW_MS, replacementDelayMs } from './replacement-delay.js';

export interface WorkerInfo {
  readonly worker: Worker;
  ingress?: string;
  /** The HTTPS listener, with `--tls-listen`. */
  tls?: string;
  connect?: string;
  connectTls?: string;
  egress?: string;
  admin?: string;
}

export class WorkerSupervisor {
  readonly #infos = new Map<number, WorkerInfo>();
  readonly #count: number;
  readonly #log: Logger;
  #ready = false;
  #draining = false;
  #reportReady: (() => void) | undefined;
  #failStart: ((err: Error) => void) | undefined;
  #allExited: (() => void) | undefined;
  /** When workers died after start-up (the last window's), for the crash-loop backoff. */
  #deaths: number[] = [];

  constructor(count: number, log: Logger) {
    this.#count = count;
    this.#log = log;
  }

  /** Forks the workers; resolves once every one listens, rejects when one exits before that. */
  start(): Promise<void> {
    const started = new Promise<void>((resolve, reject) => {
      this.#reportReady = resolve;
      this.#failStart = reject;
    });
    cluster.on('exit', (worker, code, signal) => this.#exited(worker, code, signal));
    for (let i = 0; i < this.#count; i++) this.#fork();
    return started;
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** Workers that reported their addresses. */
  live(): WorkerInfo[] {
    return [...this.#infos.values()].filter((i) => i.admin !== undefined);
  }

  /**
   * Drains every worker (SIGKILL after `graceMs`); resolves once all exited. `/ready` fails at once; the workers
   * keep accepting and serving for `delayMs` (`--drain-delay-ms`) before they are told to stop.
   */
  async drain(graceMs: number, delayMs = 0): Promise<void> {
    this.#draining = true;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const allExited = new Promise<void>((resolve) => {
      this.#allExited = resolve;
      if (this.#infos.size === 0) resolve();
    });
    return drainWorkers([...this.#infos.values()].map((i) => i.worker), allExited, graceMs);
  }

  #fork(): void {
    const worker = cluster.fork();
    const info: WorkerInfo = { worker };
    this.#infos.set(worker.id, info);
    worker.on('message', (m: Partial<ListeningMessage> | undefined) => {
      if (m?.type !== LISTENING) return;
      info.ingress = m.ingress;
      info.connect = m.connect;
      info.connectTls = m.connectTls;
      info.egress = m.egress;
      info.admin = m.admin;
      info.tls = m.tls;
      if (!this.#ready && this.live().length >= this.#count) {
        this.#ready = true;
        this.#reportReady?.();
      }
    });
  }

  #exited(worker: Worker, code: number, signal: string): void {
    this.#infos.delete(worker.id);
    if (this.#draining) {
      if (this.#infos.size === 0) this.#allExited?.();
      return;
    }
    if (!this.#ready) {
      // The others would only fail the same way (or be left behind when the primary exits): they stop now.
      for (const info of this.#infos.values()) info.worker.process.kill('SIGKILL');
      this.#failStart?.(new StartFailure(`a proxy worker exited during start-up (code ${code}, signal ${signal}); its reason is in the log above`));
      return;
    }
    const now = Date.now();
    this.#deaths = [...this.#deaths.filter((t) => now - t < DEATH_WINDOW_MS), now];
    const delayMs = replacementDelayMs(this.#deaths, now);
    this.#log.error({ worker: worker.id, code, signal, delayMs }, 'proxy worker died: starting a replacement');
    if (delayMs === 0) this.#fork();
    else setTimeout(() => this.#draining || this.#fork(), delayMs);
  }
}
