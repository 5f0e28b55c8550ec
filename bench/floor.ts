/**
 * The benchmark's floor: the least work any Node.js proxy does per request, and nothing else. A bare node:http
 * server that forwards every request with undici's low-level `dispatch` and streams the answer back, writing the
 * response head and the first body chunk in one corked write. With `--routes` it picks the worker from a static
 * `Host → IP:PORT` table (exact Host match; what a perfect binding cache would do, so it spreads over the same
 * workers as the proxy); with `--upstream` alone every request goes to that one worker. No filters, no ext_proc,
 * no header hygiene beyond hop-by-hop removal: if the proxy's product arm comes close to this, the proxy's own
 * logic costs little.
 *
 * `--ingress-headers` (the arm floor-ingress) adds the header work every ingress in front of actors does and the
 * proxy cannot leave out, done the plainest way: a Connection header's names and the internal routing headers a
 * client could forge are removed, so are a client's `forwarded`, `x-forwarded-host` and `x-real-ip`; the request
 * gets a fresh `x-request-id` (a client's is replaced), `x-forwarded-for` with the peer appended and
 * `x-forwarded-proto`; the response carries the same `x-request-id`. What the proxy costs beyond this arm is its
 * structure (lifecycle, chain, cache, router, metrics), not the headers.
 *
 * `node dist/bench/floor.js --listen 127.0.0.1:0 --admin 127.0.0.1:0 (--routes FILE | --upstream IP:PORT)`
 * logs the same "ready" line as the components ({http, admin}); its admin follows the components' conventions
 * (lib/ops-routes.ts: /ready, /stats {requests, upstream, process}, /stats/reset, /metrics), so the benchmark reads
 * its CPU the same way.
 */
import { readFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse, type OutgoingHttpHeaders } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { pathToFileURL } from 'node:url';
import { createAdminApp } from '../lib/admin-app.js';
import { Registry } from 'prom-client';
import { Pool, type Dispatcher } from 'undici';
import { readConfig, formatHelp, UsageError, type ConfigRead, type FlagSpecs, type FlagValues } from '../lib/flags.js';
import { parseHostPort, boundAddress } from '../lib/address.js';
import { createLogger, logReady } from '../lib/logger.js';
import { registerOpsRoutes, type Readiness } from '../lib/ops-routes.js';
import { guardAdmin } from '../lib/admin-guard.js';
import { processStats, resetProcessStats } from '../lib/process-stats.js';
import { metricPrefix, registerBuildInfo, scrapedCounter } from '../lib/prom-metrics.js';
import { onShutdownSignal } from '../lib/shutdown.js';
import { SinceReset } from '../lib/since-reset.js';
import { INTERNAL_HEADERS } from '../lib/wire-contract.js';

const FLAGS = {
  listen: { type: 'string', env: 'FLOOR_LISTEN', default: '127.0.0.1:0', help: 'HTTP listen address' },
  admin: { type: 'string', env: 'FLOOR_ADMIN', default: '127.0.0.1:0', help: 'admin listen address (/ready, /stats, /metrics)' },
  upstream: { type: 'string?', env: 'FLOOR_UPSTREAM', help: 'the one worker every request goes to, IP:PORT (or the fallback with --routes)' },
  routes: { type: 'string?', env: 'FLOOR_ROUTES', help: 'a JSON file {"<Host>": "IP:PORT", ...}: each request goes to its Host\'s worker' },
  'ingress-headers': { type: 'boolean', env: 'FLOOR_INGRESS_HEADERS', default: false, help: 'also do the header work every ingress does (forwarding headers, a request id both ways, forged internal and Connection-named headers removed)' },
} as const satisfies FlagSpecs;

export interface FloorConfig {
  readonly listen: string;
  readonly admin: string;
  /** Where a request whose Host is not in `routes` goes (undefined: answered 404). */
  readonly upstream: string | undefined;
  /** Host → worker address, as a perfect binding cache would know it. */
  readonly routes: Readonly<Record<string, string>>;
  /** `--ingress-headers`: the forwarding headers and request id every ingress adds (see the header). */
  readonly ingressHeaders: boolean;
}

function buildFloorConfig(values: FlagValues<typeof FLAGS>): FloorConfig {
  if (!values.upstream && !values.routes) throw new UsageError('give --upstream IP:PORT or --routes FILE');
  const routes = values.routes ? readRoutes(values.routes) : {};
  return Object.freeze({ listen: values.listen, admin: values.admin, upstream: values.upstream, routes: Object.freeze(routes), ingressHeaders: values['ingress-headers'] });
}

function readRoutes(file: string): Record<string, string> {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError(`--routes ${file}: not a JSON object`);
  const out: Record<string, string> = {};
  for (const [host, address] of Object.entries(parsed)) {
    if (typeof address !== 'string') throw new UsageError(`--routes ${file}: ${host} has no IP:PORT string`);
    parseHostPort(address, `--routes ${host}`);
    out[host] = address;
  }
  return out;
}

/** Reads argv over the environment over the defaults. */
export function readFloorConfig(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): ConfigRead<FloorConfig> {
  return readConfig(FLAGS, buildFloorConfig, argv, env);
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

function requestHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  }
  return out;
}

/** A client's headers an ingress never passes on: the internal routing headers, and the forwarding claims of a peer that is the client. */
const INGRESS_DROP: ReadonlySet<string> = new Set([...HOP_BY_HOP, ...INTERNAL_HEADERS, 'forwarded', 'x-forwarded-host', 'x-real-ip', 'x-forwarded-proto', 'x-request-id']);

let requestIds = 0;
const REQUEST_ID_PREFIX = `${process.pid.toString(16)}-${Date.now().toString(16)}-`;

/** `requestHeaders` with the ingress's header work: the request's new id is `id`. */
function ingressRequestHeaders(req: IncomingMessage, id: string): Record<string, string | string[]> {
  const headers = req.headers;
  const named = typeof headers.connection === 'string' ? headers.connection.toLowerCase().split(',').map((n) => n.trim()) : [];
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined && !INGRESS_DROP.has(k) && !named.includes(k)) out[k] = v;
  }
  const xff = headers['x-forwarded-for'];
  const peer = req.socket.remoteAddress ?? '';
  out['x-forwarded-for'] = xff === undefined ? peer : `${String(xff)}, ${peer}`;
  out['x-forwarded-proto'] = 'http';
  out['x-request-id'] = id;
  return out;
}

function responseHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  }
  return out;
}

/** Streams one upstream answer into the client response; head and first chunk leave in one corked write. */
class ForwardHandler implements Dispatcher.DispatchHandler {
  private corked = false;

  constructor(
    private readonly res: ServerResponse,
    /** `--ingress-headers`: the request's id, given back on the response. */
    private readonly requestId: string | undefined,
  ) {}

  onRequestStart(): void {}

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.res.cork();
    this.corked = true;
    const out = responseHeaders(headers);
    if (this.requestId !== undefined) out['x-request-id'] = this.requestId;
    this.res.writeHead(statusCode, out);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (!this.res.write(chunk)) {
      controller.pause();
      this.res.once('drain', () => controller.resume());
    }
    if (this.corked) {
      this.corked = false;
      process.nextTick(uncork, this.res);
    }
  }

  onResponseEnd(): void {
    this.corked = false;
    this.res.end(); // end() flushes a still-corked head and body together
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    if (!this.res.headersSent) {
      this.res.writeHead(502, { 'content-type': 'text/plain' });
      this.res.end(`floor: upstream failed: ${err.message}\n`);
    } else {
      this.res.destroy(err);
    }
  }
}

function uncork(res: ServerResponse): void {
  res.uncork();
}

export interface Floor {
  readonly http: string;
  readonly admin: string;
  close(): Promise<void>;
}

/** One pool per worker address, made on first use. */
function poolTable(): { get(address: string): Pool; close(): Promise<void> } {
  const pools = new Map<string, Pool>();
  return {
    get(address) {
      let pool = pools.get(address);
      if (pool === undefined) pools.set(address, (pool = new Pool(`http://${address}`, { pipelining: 1 })));
      return pool;
    },
    async close() {
      // destroy, not close: a response paused on a client connection that is gone would never finish.
      await Promise.all([...pools.values()].map((p) => p.destroy()));
    },
  };
}

export async function startFloor(opts: FloorConfig): Promise<Floor> {
  if (opts.upstream !== undefined) parseHostPort(opts.upstream, '--upstream');
  const routes = new Map(Object.entries(opts.routes));
  const pools = poolTable();
  const tallies = { requests: 0, unrouted: 0 };
  const server = http.createServer({ keepAliveTimeout: 65_000 }, (req: IncomingMessage, res: ServerResponse) => {
    tallies.requests++;
    const address = (routes.size > 0 ? routes.get(req.headers.host ?? '') : undefined) ?? opts.upstream;
    if (address === undefined) {
      tallies.unrouted++;
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('floor: no route for this Host\n');
      return;
    }
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    const id = opts.ingressHeaders ? `${REQUEST_ID_PREFIX}${(++requestIds).toString(16)}` : undefined;
    pools.get(address).dispatch(
      {
        path: req.url ?? '/',
        method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
        headers: id === undefined ? requestHeaders(req.headers) : ingressRequestHeaders(req, id),
        body: hasBody ? req : null,
      },
      new ForwardHandler(res, id),
    );
  });
  const sinceReset = new SinceReset(() => tallies);
  const registry = new Registry();
  registerBuildInfo(registry, 'floor');
  scrapedCounter(registry, { name: `${metricPrefix('floor')}requests_total`, help: 'Requests received.', read: () => tallies.requests });
  let readiness: Readiness = 'not-ready';
  const adminApp = createAdminApp();
  guardAdmin(adminApp, { token: undefined }); // the components' guard: a rebinding page reads nothing here either
  registerOpsRoutes(adminApp, {
    component: 'floor',
    readiness: () => readiness,
    stats: () => {
      const t = sinceReset.current();
      return { requests: { total: t.requests, unrouted: t.unrouted }, upstream: opts.upstream ?? null, routes: routes.size, process: processStats() };
    },
    resetStats: () => {
      sinceReset.reset();
      resetProcessStats();
    },
    registry,
  });
  const listen = async (s: http.Server, addr: string, what: string): Promise<string> => {
    const hp = parseHostPort(addr, what);
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(hp.port, hp.host, () => resolve());
    });
    return boundAddress(s);
  };
  const httpAddr = await listen(server, opts.listen, '--listen');
  const adminAt = parseHostPort(opts.admin, '--admin');
  await adminApp.listen({ host: adminAt.host, port: adminAt.port });
  const adminAddr = boundAddress(adminApp.server);
  readiness = 'live';
  return {
    http: httpAddr,
    admin: adminAddr,
    async close() {
      readiness = 'draining';
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await adminApp.close();
      await pools.close();
    },
  };
}

export async function main(argv: string[]): Promise<void> {
  const { help, config } = readFloorConfig(argv);
  if (help || !config) {
    process.stdout.write(formatHelp('bench floor', 'A bare node:http + undici dispatch forwarder: by a static Host table, or to one fixed worker.', FLAGS).replace('actor-edge bench floor', 'node dist/bench/floor.js'));
    return;
  }
  const log = createLogger('floor');
  const floor = await startFloor(config);
  logReady(log, { http: floor.http, admin: floor.admin });
  onShutdownSignal(log, async () => {
    await floor.close();
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`floor: ${(err as Error)?.stack ?? String(err)}\n`);
    process.exit(1);
  });
}
