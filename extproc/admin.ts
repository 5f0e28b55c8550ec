/** extproc's admin HTTP server: GET /ready, GET /metrics (Prometheus), GET /stats, POST /stats/reset. */
import Fastify, { type FastifyInstance } from 'fastify';
import type { ExtprocMetrics } from './metrics.js';

export function buildAdmin(metrics: ExtprocMetrics, isReady: () => boolean): FastifyInstance {
  const app = Fastify({ logger: false });
  app.get('/ready', async (_req, reply) => {
    if (!isReady()) return reply.code(503).type('text/plain').send('not ready\n');
    return reply.type('text/plain').send('ready\n');
  });
  app.get('/metrics', async (_req, reply) => {
    const body = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).send(body);
  });
  app.get('/stats', async () => metrics.stats());
  app.post('/stats/reset', async () => {
    metrics.reset();
    return metrics.stats();
  });
  return app;
}
