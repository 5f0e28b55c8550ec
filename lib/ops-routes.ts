/**
 * The operational conventions every component's admin API follows (proxy, its cluster primary, extproc,
 * apiserver-stub, the benchmark's floor forwarder):
 * - `GET /live`: 200 `LIVE` while the process answers at all (also while it drains: liveness is not readiness);
 * - `GET /ready`: 200 `LIVE`, or 503 `NOT_READY` (starting, or a dependency it needs does not answer) /
 *   `DRAINING` (shutting down), as text: the state word on the first line, then one line per reason. With
 *   `Accept: application/json`, `{"state","ready","reasons"}`;
 * - `GET /stats`: the component's JSON counters since the last reset;
 * - `POST /stats/reset`: zeros those counters (Prometheus keeps its lifetime values) and answers the fresh `/stats`;
 * - `GET /metrics`: Prometheus text from the component's own registry;
 * - `GET /` (and `GET /help`): every endpoint with what it does, as JSON (HTML with links for a browser);
 * - `GET /server_info`: component, version, Node.js version, the V8 flags it set for itself (`v8-tuning.ts`), pid,
 *   uptime, readiness;
 * - an unknown route answers 404 `{"error","code":"ROUTE_NOT_FOUND"}`, and fastify's own errors (a malformed body,
 *   ...) `{"error","code"}` too, like every other error of the admin APIs;
 * - every state-changing call (any method but GET, HEAD, OPTIONS) is logged with the caller's address, the
 *   status it got and how long it took: `msg: "admin call"` (refused ones at `warn`) — or, for a component with
 *   an access log (`auditTo`), as an access-log line there, independent of LOG_LEVEL (refused ones still also
 *   at `warn` on the component log).
 * Every route but `GET`/`HEAD` of `/live` and `/ready` (the index and `/server_info` included) is behind the
 * admin guard (`admin-guard.ts`): Host, Origin, and the token.
 * A route describes itself for the index with `config: { description }`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import { BUILD_INFO } from './build-info.js';
import { appliedV8Flags } from './v8-tuning.js';
import { READY, phaseReport, type Readiness, type ReadinessReport } from './readiness.js';

export type { Readiness, ReadinessReport };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** One line for the admin index (`GET /`). */
    description?: string;
    /** Left out of the index. */
    hidden?: boolean;
  }
}

const READY_TEXT: Readonly<Record<Readiness, string>> = Object.freeze({ live: 'LIVE', 'not-ready': 'NOT_READY', draining: 'DRAINING' });

/** The readiness as a report (a bare state gets the phase's standard reason). */
export function asReport(readiness: Readiness | ReadinessReport): ReadinessReport {
  if (typeof readiness !== 'string') return readiness;
  return readiness === 'live' ? READY : phaseReport(readiness === 'draining' ? 'draining' : 'starting');
}

/** The `/ready` answer, as text: the state word, then one line per reason. */
export function readyAnswer(readiness: Readiness | ReadinessReport): { readonly status: number; readonly body: string } {
  const report = asReport(readiness);
  const lines = [READY_TEXT[report.state], ...(report.state === 'live' ? [] : report.reasons)];
  return { status: report.state === 'live' ? 200 : 503, body: `${lines.join('\n')}\n` };
}

/** The `/ready` answer as JSON. */
export function readyDocument(readiness: Readiness | ReadinessReport): { readonly state: string; readonly ready: boolean; readonly reasons: readonly string[] } {
  const report = asReport(readiness);
  return { state: READY_TEXT[report.state], ready: report.state === 'live', reasons: report.state === 'live' ? [] : report.reasons };
}

function wantsJson(req: FastifyRequest): boolean {
  return String(req.headers.accept ?? '').includes('application/json');
}

/** Sends the `/ready` answer on a fastify reply (JSON when the caller accepts it). */
export function sendReady(req: FastifyRequest, reply: FastifyReply, readiness: Readiness | ReadinessReport): FastifyReply {
  const { status, body } = readyAnswer(readiness);
  if (wantsJson(req)) return reply.code(status).send(readyDocument(readiness));
  return reply.code(status).type('text/plain').send(body);
}

/** One entry of the admin index. */
export interface AdminEndpoint {
  readonly method: string;
  readonly path: string;
  readonly description: string;
  /** Not GET: passes the admin guard (Host, Origin, token) and is logged. */
  readonly changesState: boolean;
}

export interface OpsHandlers {
  /** The component, as the CLI names it (`proxy`, `extproc`, `apiserver-stub`, `floor`). */
  readonly component: string;
  readiness(): Readiness | ReadinessReport | Promise<ReadinessReport>;
  /** The `/stats` document. */
  stats(): unknown;
  /** Zeros what `/stats` reports. */
  resetStats(): void | Promise<void>;
  /** The registry `/metrics` shows (or a function making one per scrape, e.g. merged over processes). */
  readonly registry: Registry | (() => Promise<Registry>);
  /** Brings the tallies up to date before `/stats`, `/stats/reset` or `/metrics` reads them (optional). */
  refresh?(): Promise<void>;
  /** Where state-changing calls are logged (none: not logged). */
  readonly log?: Logger;
  /** Where state-changing calls go instead of the `info` line on `log`: the component's access log. */
  readonly auditTo?: (call: AdminCall) => void;
  /** `own`: the component installs its own error handler (the product shape is still expected of it). */
  readonly errors?: 'product' | 'own';
  /** More entries for the index (e.g. the routes a cluster primary forwards to its workers). */
  extraEndpoints?(): Promise<readonly AdminEndpoint[]>;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Records every route registered after it (HEAD twins and `hidden` routes left out), for `GET /`. */
function collectEndpoints(app: FastifyInstance): AdminEndpoint[] {
  const endpoints: AdminEndpoint[] = [];
  app.addHook('onRoute', (route) => {
    if (route.config?.hidden === true) return;
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      endpoints.push({ method, path: route.url, description: route.config?.description ?? '', changesState: !SAFE_METHODS.has(method) });
    }
  });
  return endpoints;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function indexHtml(component: string, endpoints: readonly AdminEndpoint[]): string {
  const rows = endpoints.map((e) => {
    const path = escapeHtml(e.path);
    const target = e.method === 'GET' && !e.path.includes(':') && !e.path.includes('*') ? `<a href="${path}">${path}</a>` : path;
    return `<tr><td>${e.method}</td><td>${target}</td><td>${escapeHtml(e.description)}</td></tr>`;
  });
  return `<!doctype html><html><head><meta charset="utf-8"><title>actor-edge ${escapeHtml(component)} admin</title></head><body><h1>actor-edge ${escapeHtml(component)} admin</h1><p>version ${escapeHtml(BUILD_INFO.version)}, Node.js ${escapeHtml(BUILD_INFO.nodeVersion)}</p><table><tr><th>method</th><th>path</th><th>what</th></tr>${rows.join('')}</table></body></html>\n`;
}

/** One state-changing admin call, as it is logged. */
export interface AdminCall {
  readonly method: string;
  readonly url: string;
  readonly status: number;
  /** The caller, `address:port`. */
  readonly client: string;
  readonly durationMs: number;
}

function audit(app: FastifyInstance, log: Logger | undefined, auditTo: ((call: AdminCall) => void) | undefined): void {
  app.addHook('onResponse', async (req, reply) => {
    if (SAFE_METHODS.has(req.method)) return;
    const admin: AdminCall = {
      method: req.method,
      url: req.url,
      status: reply.statusCode,
      client: `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`,
      durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
    };
    auditTo?.(admin);
    if (reply.statusCode === 401 || reply.statusCode === 403) log?.warn({ admin }, 'admin call refused');
    else if (auditTo === undefined) log?.info({ admin }, 'admin call');
  });
}

/** Registers the common routes, the index, the product-shaped 404 and errors, and the audit log on an admin app. */
export function registerOpsRoutes(app: FastifyInstance, ops: OpsHandlers): void {
  const endpoints = collectEndpoints(app);
  if (ops.log !== undefined || ops.auditTo !== undefined) audit(app, ops.log, ops.auditTo);
  const readiness = async (): Promise<ReadinessReport> => asReport(await ops.readiness());
  const allEndpoints = async (): Promise<AdminEndpoint[]> => {
    const extra = (await ops.extraEndpoints?.()) ?? [];
    const own = new Set(endpoints.map((e) => `${e.method} ${e.path}`));
    return [...endpoints, ...extra.filter((e) => !own.has(`${e.method} ${e.path}`))];
  };
  const index = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const list = await allEndpoints();
    if (String(req.headers.accept ?? '').includes('text/html')) return reply.type('text/html; charset=utf-8').send(indexHtml(ops.component, list));
    return reply.send({ component: ops.component, version: BUILD_INFO.version, nodeVersion: BUILD_INFO.nodeVersion, endpoints: list });
  };

  app.get('/', { config: { description: 'this list of endpoints (JSON; HTML for a browser)' } }, index);
  app.get('/help', { config: { description: 'the same list' } }, index);
  app.get('/server_info', { config: { description: 'component, version, Node.js version, pid, uptime and readiness' } }, async () => {
    const report = await readiness();
    return {
      component: ops.component,
      version: BUILD_INFO.version,
      nodeVersion: BUILD_INFO.nodeVersion,
      v8Flags: appliedV8Flags(),
      pid: process.pid,
      uptimeSeconds: Math.round(process.uptime()),
      state: readyDocument(report).state,
    };
  });
  app.get('/live', { config: { description: 'liveness: 200 LIVE while the process answers (also while draining)' } }, async (_req, reply) =>
    reply.type('text/plain').send('LIVE\n'),
  );
  app.get('/ready', { config: { description: 'readiness: 200 LIVE, or 503 NOT_READY / DRAINING with the reasons (JSON with Accept: application/json)' } }, async (req, reply) =>
    sendReady(req, reply, await readiness()),
  );
  app.get('/stats', { config: { description: 'counters since the last reset (JSON)' } }, async () => {
    await ops.refresh?.();
    return ops.stats();
  });
  app.post('/stats/reset', { config: { description: 'zeros /stats (not /metrics) and answers the fresh /stats' } }, async () => {
    await ops.refresh?.();
    await ops.resetStats();
    return ops.stats();
  });
  app.get('/metrics', { config: { description: 'Prometheus text exposition (lifetime values)' } }, async (_req, reply) => {
    await ops.refresh?.();
    const registry = typeof ops.registry === 'function' ? await ops.registry() : ops.registry;
    const text = await registry.metrics();
    return reply.type(registry.contentType).send(text);
  });

  app.setNotFoundHandler((req, reply) =>
    reply.code(404).send({ error: `no admin route ${req.method} ${req.url.split('?')[0]} (GET / lists them)`, code: 'ROUTE_NOT_FOUND' }),
  );
  if (ops.errors !== 'own') {
    app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, _req, reply) => {
      const status = err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
      return reply.code(status).send({ error: err.message, code: status < 500 ? (err.code ?? 'BAD_REQUEST') : 'INTERNAL' });
    });
  }
}
