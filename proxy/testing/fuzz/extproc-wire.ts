/**
 * A generated ext_proc answer (`arbitraries.ts`) as the `ProcessingResponse` messages the scripted ext_proc server
 * writes (proto-loader's shapes: keepCase names, enum names or numbers, bytes as Buffers, Struct values with their
 * `kind`), and what it tells the proxy: the route it names, and the internal headers it sets (which, unlike a
 * client's, may reach the worker).
 */
import { ORIGINAL_DST_LOCAL_KEY, ORIGINAL_DST_NAMESPACE } from '../../../lib/wire-contract.js';
import type { ProcessingResponse } from '../../stages/ext-proc/messages.js';
import { expand, type ExtProcAnswer, type ExtProcMutation, type RouteChoice } from './arbitraries.js';

export interface ExtProcWire {
  /** The messages written for one received message, in order; or what the server does instead. */
  readonly messages: readonly ProcessingResponse[] | 'ignore' | 'end-ok' | 'fail';
  /** The route it names as a usable `original_dst` (a string in the right namespace), if any. */
  readonly route: string | undefined;
  /** Header values it sets (lower-case names). */
  readonly sets: readonly (readonly [string, string])[];
  /** The names of the headers among them it appends (`append: true`): another value, not one in place of the last. */
  readonly appends: readonly string[];
}

function address(choice: RouteChoice, worker: string): string | undefined {
  const port = worker.slice(worker.lastIndexOf(':') + 1);
  switch (choice) {
    case 'worker':
      return worker;
    case 'worker-localhost':
      return `localhost:${port}`;
    case 'worker-v6':
      return `[::1]:${port}`;
    case 'refused':
      return '127.0.0.1:1';
    case 'garbage':
      return 'not an address';
    case 'none':
      return undefined;
  }
}

function mutationOf(m: ExtProcMutation | undefined, sets: [string, string][], appends: string[]): Record<string, unknown> | undefined {
  if (m === undefined) return undefined;
  return {
    set_headers: m.set.map((h) => {
      const raw = h.raw === undefined ? undefined : expand(h.raw);
      sets.push([h.key.toLowerCase(), raw ?? '']);
      if (h.append === true) appends.push(h.key.toLowerCase());
      return {
        header: { key: h.key, ...(raw === undefined ? {} : { raw_value: Buffer.from(raw, 'latin1') }), ...(h.value === undefined ? {} : { value: h.value }) },
        ...(h.append === undefined ? {} : { append: { value: h.append } }),
      };
    }),
    remove_headers: [...m.remove],
  };
}

/** `asked`: the kind of the message being answered (`request_headers`, `request_body`, `response_headers`). */
export function extProcWire(a: ExtProcAnswer, worker: string, asked: string): ExtProcWire {
  const sets: [string, string][] = [];
  const appends: string[] = [];
  switch (a.kind) {
    case 'ignore':
    case 'end-ok':
    case 'fail':
      return { messages: a.kind, route: undefined, sets, appends };
    case 'empty':
      return { messages: [{} as ProcessingResponse], route: undefined, sets, appends };
    case 'streamed-immediate': {
      const head = { streamed_immediate_response: { headers_response: { headers: { headers: [{ key: ':status', raw_value: Buffer.from(a.code) }] }, end_of_stream: a.body === '' } } };
      const body = { streamed_immediate_response: { body_response: { body: Buffer.from(a.body), end_of_stream: true } } };
      return { messages: (a.body === '' ? [head] : [head, body]) as ProcessingResponse[], route: undefined, sets, appends };
    }
    case 'immediate': {
      const immediate = {
        immediate_response: {
          ...(a.code === undefined ? {} : { status: { code: a.code } }),
          ...(a.mutation === undefined ? {} : { headers: mutationOf(a.mutation, sets, appends) }),
          body: Buffer.from(a.body),
          ...(a.grpcStatus === undefined ? {} : { grpc_status: { status: a.grpcStatus } }),
          details: 'fuzz',
        },
      };
      return { messages: [immediate as ProcessingResponse], route: undefined, sets, appends };
    }
    default: {
      const local = address(a.route, worker);
      const field = a.kind === 'match' ? asked : a.kind === 'headers' ? 'request_headers' : a.kind === 'body' ? 'request_body' : 'response_headers';
      const common = {
        status: a.status,
        ...(a.mutation === undefined ? {} : { header_mutation: mutationOf(a.mutation, sets, appends) }),
        ...(a.bodyMutation === 'replace' ? { body_mutation: { body: Buffer.from('replaced by ext_proc') } } : a.bodyMutation === 'clear' ? { body_mutation: { clear_body: true } } : {}),
      };
      const value = a.metadataShape === 'number' ? { kind: 'numberValue', numberValue: 8080 } : { kind: 'stringValue', stringValue: local ?? '' };
      const namespace = a.metadataShape === 'other-namespace' ? 'x.fuzz.other' : ORIGINAL_DST_NAMESPACE;
      const message = {
        [field]: { response: common },
        ...(local === undefined ? {} : { dynamic_metadata: { fields: { [namespace]: { kind: 'structValue', structValue: { fields: { [ORIGINAL_DST_LOCAL_KEY]: value } } } } } }),
        ...(a.modeOverride ? { mode_override: { response_header_mode: 'SKIP', request_body_mode: 'NONE' } } : {}),
      };
      const messages = a.timeoutOverride ? [{ override_message_timeout: { seconds: '1', nanos: 0 } }, message] : [message];
      const route = local !== undefined && a.metadataShape === 'string' ? local : undefined;
      return { messages: messages as ProcessingResponse[], route, sets, appends };
    }
  }
}
