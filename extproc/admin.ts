/** extproc's admin HTTP server: the common ops routes (lib/ops-routes.ts): /, /live, /ready, /stats, /stats/reset, /metrics. */
import type { FastifyInstance } from 'fastify';
import { createAdminApp } from '../lib/admin-app.js';
import type { Logger } from 'pino';
import { registerOpsRoutes, type Readiness, type ReadinessReport } from '../lib/ops-routes.js';
import type { ExtprocMetrics } from './metrics.js';

/** `log`: where state-changing calls (`POST /stats/reset`) are logged with the caller's address. */
export function buildAdmin(metrics: ExtprocMetrics, readiness: () => Readiness | ReadinessReport | Promise<ReadinessReport>, log?: Logger): FastifyInstance {
  const app = createAdminApp();
  registerOpsRoutes(app, {
    component: 'extproc',
    readiness,
    stats: () => metrics.stats(),
    resetStats: () => metrics.reset(),
    registry: metrics.registry,
    ...(log === undefined ? {} : { log }),
  });
  return app;
}
