/**
 * A small stack for the client-connection end-to-end tests: a real proxy (in the test's process by default, or its
 * own process, `actor-edge proxy`, for a test about processes: signals, exit codes, `--workers N`), a scripted
 * ext_proc that routes every actor to one node:http upstream, and that upstream, which counts its open
 * connections and concurrent requests. Upstream paths: `/hold...` is answered only when the test calls
 * `release()` (or never, if the proxy goes away first); `/big?bytes=N` answers N bytes; anything else answers a
 * small JSON naming the path and the body length.
 */
import type http from 'node:http';
import { request } from 'undici';
import { startTestProxy, type InProcessTestProxy, type ProxyHandle, type TestProxy } from './proxy.js';
import type { StatsDocument } from '../admin/stats-document.js';
import { routeTo, startScriptedExtProc, startUpstream, type ScriptedExtProc, type Upstream } from './helpers.js';

export interface TrackedUpstream {
  readonly upstream: Upstream;
  readonly address: string;
  /** Request paths (with query) in the order they arrived. */
  readonly arrivals: string[];
  openConnections: number;
  maxConnections: number;
  active: number;
  maxActive: number;
  /** Answers every held request (200). */
  release(): void;
  close(): Promise<void>;
}

export async function startTrackedUpstream(): Promise<TrackedUpstream> {
  const held: http.ServerResponse[] = [];
  const answer = (res: http.ServerResponse, body: string): void => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  const state: TrackedUpstream = {
    upstream: undefined as unknown as Upstream,
    address: '',
    arrivals: [],
    openConnections: 0,
    maxConnections: 0,
    active: 0,
    maxActive: 0,
    release() {
      for (const res of held.splice(0)) if (!res.destroyed) answer(res, '{"held":true}');
    },
    close: () => state.upstream.close(),
  };
  const upstream = await startUpstream((req, res, body) => {
    const url = req.url ?? '/';
    state.arrivals.push(url);
    state.active++;
    state.maxActive = Math.max(state.maxActive, state.active);
    res.once('close', () => state.active--);
    if (url.startsWith('/hold')) {
      held.push(res);
      return;
    }
    const bytes = url.startsWith('/big') ? Number(new URL(url, 'http://x').searchParams.get('bytes')) : 0;
    if (bytes > 0) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes });
      res.end(Buffer.alloc(bytes, 120));
      return;
    }
    answer(res, JSON.stringify({ path: url, bodyLength: body.length }));
  });
  upstream.server.on('connection', (socket) => {
    state.openConnections++;
    state.maxConnections = Math.max(state.maxConnections, state.openConnections);
    socket.once('close', () => state.openConnections--);
  });
  Object.assign(state, { upstream, address: upstream.address });
  return state;
}

export interface EdgeStack<P extends ProxyHandle = ProxyHandle> {
  readonly upstream: TrackedUpstream;
  readonly extproc: ScriptedExtProc;
  readonly proxy: P;
  /** `host:port` of the proxy's ingress. */
  readonly ingress: string;
  readonly admin: string;
  close(): Promise<void>;
}

/** A scripted ext_proc that routes every request to one upstream, and a proxy asking it. */
export interface ScriptedRoute<P extends ProxyHandle = ProxyHandle> {
  readonly extproc: ScriptedExtProc;
  readonly proxy: P;
  /** Stops the proxy, then the ext_proc (the upstream is the caller's). */
  close(): Promise<void>;
}

/**
 * Starts a scripted ext_proc routing every request to `upstream` (`host:port`) and a proxy on it with `args`: in the
 * test's process, or (`'process'`) its own. A start that fails closes what it had started.
 */
export function startScriptedRoute(upstream: string, args: readonly string[], mode: 'process'): Promise<ScriptedRoute<TestProxy>>;
export function startScriptedRoute(upstream: string, args?: readonly string[], mode?: 'in-process'): Promise<ScriptedRoute<InProcessTestProxy>>;
export async function startScriptedRoute(upstream: string, args: readonly string[] = [], mode: 'in-process' | 'process' = 'in-process'): Promise<ScriptedRoute> {
  const extproc = await startScriptedExtProc(() => routeTo(upstream));
  try {
    const proxy = mode === 'process' ? await startTestProxy({ extproc: extproc.address, args }) : await startTestProxy({ mode, extproc: extproc.address, args });
    return {
      extproc,
      proxy,
      async close() {
        await proxy.stop();
        await extproc.close();
      },
    };
  } catch (err) {
    await extproc.close();
    throw err;
  }
}

/**
 * Starts the upstream, the scripted ext_proc and a proxy with `args` added to its flags: in the test's process, or
 * (`'process'`) its own. A start that fails closes what it had started.
 */
export function startEdgeStack(args: string[] | undefined, mode: 'process'): Promise<EdgeStack<TestProxy>>;
export function startEdgeStack(args?: string[], mode?: 'in-process'): Promise<EdgeStack<InProcessTestProxy>>;
export async function startEdgeStack(args: string[] = [], mode: 'in-process' | 'process' = 'in-process'): Promise<EdgeStack> {
  const upstream = await startTrackedUpstream();
  try {
    const route = mode === 'process' ? await startScriptedRoute(upstream.address, args, mode) : await startScriptedRoute(upstream.address, args);
    return {
      upstream,
      extproc: route.extproc,
      proxy: route.proxy,
      ingress: route.proxy.address,
      admin: route.proxy.admin,
      async close() {
        await route.close();
        await upstream.close();
      },
    };
  } catch (err) {
    await upstream.close();
    throw err;
  }
}

export type EdgeStats = StatsDocument;

export async function edgeStats(stack: EdgeStack): Promise<EdgeStats> {
  const res = await request(`${stack.admin}/stats`);
  return (await res.body.json()) as EdgeStats;
}

/** The access-log lines the proxy wrote so far. */
export function accessLines(stack: EdgeStack): Record<string, unknown>[] {
  return stack.proxy.logs().filter((l) => l.msg === 'access');
}
