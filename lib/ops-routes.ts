/**
 * The operational conventions every component's admin API follows (proxy, extproc, apiserver-stub, the
 * benchmark's floor forwarder):
 * - `GET /live`: 200 `LIVE` whenever the process answers at all (liveness: restart me only when this fails);
 * - `GET /ready`: 200 `LIVE`, or 503 `NOT_READY` (still starting) / `DRAINING` (shutting down), as text;
 * - `GET /stats`: the component's JSON counters since the last reset;
 * - `POST /stats/reset`: zeros those counters (Prometheus keeps its lifetime values) and answers the fresh `/stats`;
 * - `GET /metrics`: Prometheus text from the component's own registry.
 * Every route but `/ready` (and `/live`) is behind the admin guard (`admin-guard.ts`): Host, Origin, and the token.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Registry } from 'prom-client';

export type Readiness = 'live' | 'not-ready' | 'draining';

const READY_TEXT: Readonly<Record<Readiness, string>> = Object.freeze({ live: 'LIVE', 'not-ready': 'NOT_READY', draining: 'DRAINING' });

/** The `/ready` answer for a readiness. */
export function readyAnswer(readiness: Readiness): { readonly status: number; readonly body: string } {
  return { status: readiness === 'live' ? 200 : 503, body: `${READY_TEXT[readiness]}\n` };
}

/** Sends the `/ready` answer on a fastify reply. */
export function sendReady(reply: FastifyReply, readiness: Readiness): FastifyReply {
  const { status, body } = readyAnswer(readiness);
  return reply.code(status).type('text/plain').send(body);
}

/** Registers `GET /live`: 200 while the process can answer; it never reports readiness (a draining process is alive). */
export function registerLive(app: FastifyInstance): void {
  app.get('/live', async (_req, reply) => reply.code(200).type('text/plain').send('LIVE\n'));
}

export interface OpsHandlers {
  readiness(): Readiness;
  /** The `/stats` document. */
  stats(): unknown;
  /** Zeros what `/stats` reports. */
  resetStats(): void | Promise<void>;
  readonly registry: Registry;
  /** Brings the tallies up to date before `/stats`, `/stats/reset` or `/metrics` reads them (optional). */
  refresh?(): Promise<void>;
}

/** Registers `/live`, `/ready`, `/stats`, `/stats/reset` and `/metrics` on a component's admin app. */
export function registerOpsRoutes(app: FastifyInstance, ops: OpsHandlers): void {
  registerLive(app);
  app.get('/ready', async (_req, reply) => sendReady(reply, ops.readiness()));
  app.get('/stats', async () => {
    await ops.refresh?.();
    return ops.stats();
  });
  app.post('/stats/reset', async () => {
    await ops.refresh?.();
    await ops.resetStats();
    return ops.stats();
  });
  app.get('/metrics', async (_req, reply) => {
    await ops.refresh?.();
    const text = await ops.registry.metrics();
    return reply.type(ops.registry.contentType).send(text);
  });
}
