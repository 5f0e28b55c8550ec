/**
 * Test clients for apiserver-stub: a promisified ateapi.Control gRPC client, plain HTTP/1.1 requests to a worker
 * address with an actor Host, and admin API calls. Real sockets on loopback only.
 */
import http from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { loadProto, lookup } from '../../lib/proto.js';
import type * as api from '../ateapi-types.js';

export type RpcResult<T> = { ok: true; value: T } | { ok: false; code: grpc.status; details: string };

export interface ControlTestClient {
  call<T>(method: string, request: object): Promise<RpcResult<T>>;
  resume(name: string, atespace?: string): Promise<RpcResult<api.ActorResponse>>;
  close(): void;
}

export function controlClient(address: string): ControlTestClient {
  const Ctor = lookup<grpc.ServiceClientConstructor>(loadProto('ateapi/ateapi.proto'), 'ateapi.Control');
  const client = new Ctor(address, grpc.credentials.createInsecure()) as unknown as Record<string, (req: object, cb: (err: grpc.ServiceError | null, res: unknown) => void) => void> & grpc.Client;
  const call = <T>(method: string, request: object): Promise<RpcResult<T>> =>
    new Promise((resolve) => {
      client[method]!.call(client, request, (err, res) =>
        resolve(err ? { ok: false, code: err.code, details: err.details } : { ok: true, value: res as T }),
      );
    });
  return {
    call,
    resume: (name, atespace = 'demo') => call<api.ActorResponse>('ResumeActor', { actor_ref: { atespace, name } }),
    close: () => client.close(),
  };
}

export interface HttpResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface WorkerRequest {
  ip: string;
  port: number;
  host: string;
  path?: string;
  method?: string;
  headers?: http.OutgoingHttpHeaders;
  body?: string | Buffer;
  agent?: http.Agent | false;
}

/** One HTTP/1.1 request; rejects on connection errors (e.g. ECONNREFUSED). */
export function workerRequest(r: WorkerRequest): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: r.ip, port: r.port, path: r.path ?? '/', method: r.method ?? 'GET', headers: { ...r.headers, host: r.host }, agent: r.agent ?? false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(r.body);
  });
}

/** A JSON admin call; resolves with status and parsed body. */
export async function admin<T = Record<string, unknown>>(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers = { 'content-type': 'application/json' };
  }
  const res = await fetch(`http://${base}${path}`, init);
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
}
