/**
 * Test helpers for the proxy: a scripted ext_proc server (gRPC, port 0) and plain node:http upstreams on port 0
 * (the proxy itself: `proxy.ts`).
 */
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { request } from 'undici';
import { loadProto, lookup } from '../../lib/proto.js';
import { boundAddress } from '../../lib/address.js';
import { EXT_PROC_PROTO, EXT_PROC_SERVICE, type ProcessingResponse } from '../stages/ext-proc/messages.js';

export const silentLog = pino({ level: 'silent' });

/** One received ProcessingRequest, headers decoded to a lower-case map. */
export interface SeenMessage {
  readonly kind: string;
  readonly headers: Record<string, string>;
  readonly protocolConfig: unknown;
  readonly endOfStream: boolean;
  /** The whole message as decoded (attributes, metadata_context, bodies). */
  readonly raw: Readonly<Record<string, unknown>>;
}

export type ExtProcScript = (msg: SeenMessage, call: grpc.ServerDuplexStream<unknown, unknown>) => ProcessingResponse | 'ignore' | 'end-ok' | 'fail' | Promise<ProcessingResponse | 'ignore' | 'end-ok' | 'fail'>;

export interface ScriptedExtProc {
  readonly address: string;
  readonly seen: SeenMessage[];
  streams: number;
  active: number;
  /** Streams whose client half-closed or cancelled. */
  closedByClient: number;
  script: ExtProcScript;
  close(): Promise<void>;
}

function decode(m: Record<string, unknown>): SeenMessage {
  const kind = String(m.request);
  const h = (m[kind] as { headers?: { headers?: { key: string; value: string; raw_value: Buffer }[] }; end_of_stream?: boolean }) ?? {};
  const headers: Record<string, string> = {};
  for (const x of h.headers?.headers ?? []) headers[x.key] = x.raw_value.length > 0 ? x.raw_value.toString('latin1') : x.value;
  return { kind, headers, protocolConfig: m.protocol_config, endOfStream: h.end_of_stream === true, raw: m };
}

/** The success answer extproc gives: x-ate-target-port plus the original_dst metadata. */
export function routeTo(address: string, port = '80'): ProcessingResponse {
  return {
    request_headers: {
      response: {
        status: 'CONTINUE',
        header_mutation: { set_headers: [{ header: { key: 'x-ate-target-port', raw_value: Buffer.from(port) } }], remove_headers: [] },
      },
    },
    dynamic_metadata: {
      fields: {
        'envoy.filters.listener.original_dst': {
          kind: 'structValue',
          structValue: { fields: { local: { kind: 'stringValue', stringValue: address }, port: { kind: 'stringValue', stringValue: port } } },
        },
      },
    },
  } as ProcessingResponse;
}

export async function startScriptedExtProc(script: ExtProcScript, port = 0): Promise<ScriptedExtProc> {
  const Svc = lookup<grpc.ServiceClientConstructor>(loadProto(EXT_PROC_PROTO), EXT_PROC_SERVICE);
  const server = new grpc.Server();
  const state: ScriptedExtProc = {
    address: '',
    seen: [],
    streams: 0,
    active: 0,
    closedByClient: 0,
    script,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())).then(() => server.forceShutdown()),
  };
  server.addService(Svc.service, {
    Process(call: grpc.ServerDuplexStream<Record<string, unknown>, unknown>) {
      state.streams++;
      state.active++;
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        state.active--;
      };
      call.on('data', async (m: Record<string, unknown>) => {
        const seen = decode(m);
        state.seen.push(seen);
        const answer = await state.script(seen, call as grpc.ServerDuplexStream<unknown, unknown>);
        if (answer === 'ignore') return;
        if (answer === 'end-ok') {
          call.end();
          return;
        }
        if (answer === 'fail') {
          call.emit('error', { code: grpc.status.INTERNAL, details: 'scripted failure' });
          return;
        }
        if (!call.cancelled && !call.destroyed) call.write(answer);
      });
      call.on('end', () => {
        state.closedByClient++;
        finish();
        if (!call.destroyed) call.end();
      });
      call.on('cancelled', () => {
        state.closedByClient++;
        finish();
      });
      call.on('error', () => finish());
      call.on('close', finish);
    },
  });
  const bound = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))),
  );
  (state as { address: string }).address = `127.0.0.1:${bound}`;
  return state;
}

export interface Upstream {
  readonly address: string;
  readonly server: http.Server;
  readonly requests: { method: string; url: string; headers: http.IncomingHttpHeaders; rawHeaders: string[]; body: Buffer }[];
  close(): Promise<void>;
}

/** A node:http upstream on `host`:0; `handler` answers after the body was read (unless it reads it itself). */
export async function startUpstream(
  handler: (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void,
  host = '127.0.0.1',
  opts: { readBody?: boolean } = {},
): Promise<Upstream> {
  const requests: Upstream['requests'] = [];
  const server = http.createServer({ maxHeaderSize: 128 * 1024 }, (req, res) => {
    if (opts.readBody === false) {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawHeaders: req.rawHeaders, body: Buffer.alloc(0) });
      handler(req, res, Buffer.alloc(0));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, rawHeaders: req.rawHeaders, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    address: boundAddress(server),
    server,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function getJson(url: string): Promise<Record<string, unknown>> {
  const res = await request(url);
  return (await res.body.json()) as Record<string, unknown>;
}

/** The path of a compiled test fixture (proxy/testing/fixtures/<name>.js). */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`./fixtures/${name}.js`, import.meta.url));
}
