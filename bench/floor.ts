/**
 * The benchmark's floor: the least work any Node.js proxy does per request, and nothing else. A bare node:http
 * server that forwards every request to one fixed worker with undici's low-level `dispatch` and streams the answer
 * back, writing the response head and the first body chunk in one corked write. No filters, no routing decision,
 * no header hygiene beyond hop-by-hop removal: if the proxy's product arm comes close to this, the proxy's own
 * logic costs little.
 *
 * `node dist/bench/floor.js --listen 127.0.0.1:0 --admin 127.0.0.1:0 --upstream IP:PORT`
 * logs the same "ready" line as the components ({http, admin}); the admin answers GET /stats ({requests, process})
 * and POST /stats/reset like theirs, so the benchmark reads its CPU the same way.
 */
import http, { type IncomingMessage, type ServerResponse, type OutgoingHttpHeaders } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import { pathToFileURL } from 'node:url';
import { Pool, type Dispatcher } from 'undici';
import { readFlags, formatHelp, type FlagSpecs } from '../lib/flags.js';
import { parseHostPort, boundAddress } from '../lib/address.js';
import { createLogger, logReady } from '../lib/logger.js';
import { processStats, resetProcessStats } from '../lib/process-stats.js';
import { onShutdownSignal } from '../lib/shutdown.js';

const FLAGS = {
  listen: { type: 'string', env: 'FLOOR_LISTEN', default: '127.0.0.1:0', help: 'HTTP listen address' },
  admin: { type: 'string', env: 'FLOOR_ADMIN', default: '127.0.0.1:0', help: 'admin listen address (/stats)' },
  upstream: { type: 'string?', env: 'FLOOR_UPSTREAM', help: 'the one worker every request goes to, IP:PORT (required)' },
} as const satisfies FlagSpecs;

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'trailer', 'upgrade']);

function requestHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
  }
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

  constructor(private readonly res: ServerResponse) {}

  onRequestStart(): void {}

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.res.cork();
    this.corked = true;
    this.res.writeHead(statusCode, responseHeaders(headers));
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

export async function startFloor(opts: { listen: string; admin: string; upstream: string }): Promise<Floor> {
  const up = parseHostPort(opts.upstream, '--upstream');
  const pool = new Pool(`http://${opts.upstream}`, { pipelining: 1 });
  let requests = 0;
  const server = http.createServer({ keepAliveTimeout: 65_000 }, (req: IncomingMessage, res: ServerResponse) => {
    requests++;
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    pool.dispatch(
      { path: req.url ?? '/', method: (req.method ?? 'GET') as Dispatcher.HttpMethod, headers: requestHeaders(req.headers), body: hasBody ? req : null },
      new ForwardHandler(res),
    );
  });
  const admin = http.createServer((req, res) => {
    if (req.url === '/stats' && req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ requests: { total: requests }, upstream: `${up.host}:${up.port}`, process: processStats() }));
    } else if (req.url === '/stats/reset' && req.method === 'POST') {
      requests = 0;
      resetProcessStats();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"reset":true}');
    } else {
      res.writeHead(404).end();
    }
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
  const adminAddr = await listen(admin, opts.admin, '--admin');
  return {
    http: httpAddr,
    admin: adminAddr,
    async close() {
      server.closeAllConnections();
      admin.closeAllConnections();
      await Promise.all([new Promise((r) => server.close(r)), new Promise((r) => admin.close(r))]);
      await pool.close();
    },
  };
}

export async function main(argv: string[]): Promise<void> {
  const { help, values } = readFlags(FLAGS, argv);
  if (help) {
    process.stdout.write(formatHelp('bench floor', 'A bare node:http + undici dispatch forwarder to one fixed worker.', FLAGS).replace('actor-edge bench floor', 'node dist/bench/floor.js'));
    return;
  }
  if (!values.upstream) throw new Error('--upstream IP:PORT is required');
  const log = createLogger('floor');
  const floor = await startFloor({ listen: values.listen, admin: values.admin, upstream: values.upstream });
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
