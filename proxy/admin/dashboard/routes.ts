/**
 * The live dashboard on the admin server: `GET /dashboard` (the page), `/dashboard/style.css`, and the two ES
 * modules it runs, `/dashboard/view.js` and `/dashboard/model.js` (this package's own compiled files, read once
 * from beside this one). Everything comes from the package: no build step beyond the project's own compile, no
 * CDN. A strict Content-Security-Policy allows only this origin.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { DASHBOARD_CSS, DASHBOARD_HTML } from './page.js';

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** A compiled module beside this file, without its source-map comment (the maps are not served). */
function compiledModule(name: string): string {
  return readFileSync(new URL(`./${name}`, import.meta.url), 'utf8').replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n');
}

export function dashboardPlugin(): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    const files: Record<string, { readonly type: string; readonly body: string }> = {
      'style.css': { type: 'text/css; charset=utf-8', body: DASHBOARD_CSS },
      'view.js': { type: 'text/javascript; charset=utf-8', body: compiledModule('view.js') },
      'model.js': { type: 'text/javascript; charset=utf-8', body: compiledModule('model.js') },
    };
    app.addHook('onSend', async (req, reply) => {
      if (req.url.startsWith('/dashboard')) {
        void reply.header('content-security-policy', CSP).header('x-content-type-options', 'nosniff').header('cache-control', 'no-cache');
      }
    });
    app.get('/dashboard', { config: { description: 'live dashboard (HTML): rates, hit ratio, latency by cache outcome, re-runs, errors, tunnels, bindings' } }, async (_req, reply) =>
      reply.type('text/html; charset=utf-8').send(DASHBOARD_HTML),
    );
    app.get<{ Params: { file: string } }>('/dashboard/:file', { config: { hidden: true } }, async (req, reply) => {
      const file = files[req.params.file];
      if (file === undefined) return reply.code(404).send({ error: `no dashboard file ${req.params.file}`, code: 'ROUTE_NOT_FOUND' });
      return reply.type(file.type).send(file.body);
    });
  };
}
