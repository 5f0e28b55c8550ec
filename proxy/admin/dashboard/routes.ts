/**
 * The live dashboard on the admin server: `GET /dashboard` (the page), `/dashboard/style.css`, and the ES modules it
 * runs, `/dashboard/view.js`, `/dashboard/model.js` and `/dashboard/history.js` (this package's own compiled files,
 * read once from beside this one). Everything comes from the package: no build step beyond the project's own
 * compile, no CDN. A strict Content-Security-Policy allows only this origin.
 *
 * The page is served with what `/stats`, `/metrics`, `/ready` and `/stats/history` answer at that moment, asked of
 * this same admin (`inject`, with the caller's Host and credentials, so the guard decides as for the caller): the
 * first frame has numbers and minutes of charts. The same on a cluster primary, whose routes answer the sums.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from 'fastify';
import { DASHBOARD_CSS, dashboardHtml } from './page.js';

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** A compiled module beside this file, without its source-map comment (the maps are not served). */
function compiledModule(name: string): string {
  return readFileSync(new URL(`./${name}`, import.meta.url), 'utf8').replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n');
}

/** What the page starts from (view.ts reads it); null parts the page asks for itself. */
async function initialData(app: FastifyInstance, req: FastifyRequest): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = {};
  for (const name of ['host', 'authorization'] as const) {
    const v = req.headers[name];
    if (typeof v === 'string') headers[name] = v;
  }
  const get = async (url: string, accept?: string): Promise<{ status: number; body: string }> => {
    const res = await app.inject({ method: 'GET', url, headers: accept === undefined ? headers : { ...headers, accept } });
    return { status: res.statusCode, body: res.body };
  };
  const json = (a: { status: number; body: string }): unknown => (a.status === 200 ? (JSON.parse(a.body) as unknown) : null);
  const [stats, metrics, ready, history] = await Promise.all([get('/stats'), get('/metrics'), get('/ready', 'application/json'), get('/stats/history')]);
  return {
    stats: json(stats),
    metrics: metrics.status === 200 ? metrics.body : null,
    ready: { status: ready.status, body: JSON.parse(ready.body) as unknown },
    history: json(history),
  };
}

export function dashboardPlugin(): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    const files: Record<string, { readonly type: string; readonly body: string }> = {
      'style.css': { type: 'text/css; charset=utf-8', body: DASHBOARD_CSS },
      'view.js': { type: 'text/javascript; charset=utf-8', body: compiledModule('view.js') },
      'model.js': { type: 'text/javascript; charset=utf-8', body: compiledModule('model.js') },
      'history.js': { type: 'text/javascript; charset=utf-8', body: compiledModule('history.js') },
    };
    app.addHook('onSend', async (req, reply) => {
      if (req.url.startsWith('/dashboard')) {
        void reply.header('content-security-policy', CSP).header('x-content-type-options', 'nosniff').header('cache-control', 'no-cache');
      }
    });
    app.get('/dashboard', { config: { description: 'live dashboard (HTML): rates, hit ratio, latency by cache outcome, charts of the last minutes, re-runs, errors, tunnels, bindings' } }, async (req, reply) => {
      // Without the data (an admin that cannot answer itself now) the page still works: it polls at once.
      const initial = await initialData(app, req).catch(() => null);
      return reply.type('text/html; charset=utf-8').send(dashboardHtml(initial));
    });
    app.get<{ Params: { file: string } }>('/dashboard/:file', { config: { hidden: true } }, async (req, reply) => {
      const file = files[req.params.file];
      if (file === undefined) return reply.code(404).send({ error: `no dashboard file ${req.params.file}`, code: 'ROUTE_NOT_FOUND' });
      return reply.type(file.type).send(file.body);
    });
  };
}
