/**
 * ProcessingResponse builders. Header values go only in `raw_value`, as Buffers (Envoy >= 1.32 reads only
 * raw_value and rejects a mutation that sets both); `append: false` means overwrite — the only append control
 * Envoy's ext_proc has ever honoured, so it is the only one sent (`append_action` stays unset). Dynamic metadata is a Struct
 * whose top-level keys are Envoy metadata namespaces.
 */
import { formatHostPort } from '../lib/address.js';
import { ORIGINAL_DST_LOCAL_KEY, ORIGINAL_DST_NAMESPACE, ORIGINAL_DST_PORT_KEY, TARGET_PORT_HEADER } from '../lib/wire-contract.js';
import { encodeResponse, structValueFields, type ProcessingResponse, type RequestKind } from './protocol.js';

const VALUE = structValueFields();
const TEXT_PLAIN = Buffer.from('text/plain');
const OVERWRITE = Object.freeze({ value: false });

function setHeader(key: string, value: Buffer): Record<string, unknown> {
  return { header: { key, raw_value: value }, append: OVERWRITE };
}

function stringValue(value: string): Record<string, unknown> {
  return { [VALUE.string]: value };
}

/** Answers the request headers with a local reply (Envoy sends it and stops processing the request). */
export function immediateResponse(status: number, body: string, details: string): ProcessingResponse {
  return {
    immediate_response: {
      status: { code: status },
      headers: { set_headers: [setHeader('content-type', TEXT_PLAIN)] },
      body: Buffer.from(body, 'utf8'),
      details,
    },
  };
}

/**
 * Continues the request to the actor: `x-ate-target-port` overwritten with the port the Host named, and the worker
 * address (`<ip>:<worker-port>`, IPv6 in brackets) published for the ORIGINAL_DST cluster.
 */
export function routeResponse(ip: string, workerPort: number, targetPort: number): Readonly<Record<string, unknown>> {
  const port = String(targetPort);
  return {
    request_headers: {
      response: {
        status: 'CONTINUE',
        header_mutation: { set_headers: [setHeader(TARGET_PORT_HEADER, Buffer.from(port, 'latin1'))] },
      },
    },
    dynamic_metadata: {
      fields: {
        [ORIGINAL_DST_NAMESPACE]: {
          [VALUE.struct]: {
            fields: { [ORIGINAL_DST_LOCAL_KEY]: stringValue(formatHostPort(ip, workerPort)), [ORIGINAL_DST_PORT_KEY]: stringValue(port) },
          },
        },
      },
    },
  };
}

/**
 * Encoded route answers, keyed by worker IP and target port: a busy processor answers the same few combinations
 * over and over, so each is built and encoded once. Bounded; it simply starts over when full.
 */
export class RouteResponses {
  private readonly encoded = new Map<string, Buffer>();

  constructor(
    private readonly workerPort: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(ip: string, targetPort: number): Buffer {
    const key = `${ip} ${targetPort}`;
    let hit = this.encoded.get(key);
    if (hit === undefined) {
      if (this.encoded.size >= this.maxEntries) this.encoded.clear();
      hit = encodeResponse(routeResponse(ip, this.workerPort, targetPort));
      this.encoded.set(key, hit);
    }
    return hit;
  }
}

const EMPTY_COMMON = { response: { status: 'CONTINUE' } };

/** The plain CONTINUE answer for each message kind, encoded once (trailers get an empty TrailersResponse). */
export const CONTINUE: Readonly<Record<RequestKind, ProcessingResponse>> = Object.freeze({
  request_headers: encodeResponse({ request_headers: EMPTY_COMMON }),
  response_headers: encodeResponse({ response_headers: EMPTY_COMMON }),
  request_body: encodeResponse({ request_body: EMPTY_COMMON }),
  response_body: encodeResponse({ response_body: EMPTY_COMMON }),
  request_trailers: encodeResponse({ request_trailers: {} }),
  response_trailers: encodeResponse({ response_trailers: {} }),
});
