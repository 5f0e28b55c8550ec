/** extproc's admin HTTP server: the common ops routes (lib/ops-routes.ts): /ready, /stats, /stats/reset, /metrics. */
import Fastify, { type FastifyInstance } from 'fastify';
import { registerOpsRoutes, type Readiness } from '../lib/ops-routes.js';
import type { ExtprocMetrics } from './metrics.js';

export function buildAdmin(metrics: ExtprocMetrics, readiness: () => Readiness): FastifyInstance {
  const app = Fastify({ logger: false });
  registerOpsRoutes(app, {
    readiness,
    stats: () => metrics.stats(),
    resetStats: () => metrics.reset(),
    registry: metrics.registry,
  });
  return app;
}
