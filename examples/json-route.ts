/**
 * Example filter with an offloaded part: routes a JSON request by a field of its body, parsing the body off the
 * event loop. A POST whose Content-Type is JSON must carry a JSON object whose `field` (default `model`) is one of
 * `allowed`; the request then goes on with that value in a header (default `x-model`) for the upstream to route by.
 * A body that is not such an object, or names no allowed value, gets 400; a body over `maxBytes` gets 413
 * `PROXY_ERR_BODY_TOO_LARGE`. Other requests are not read.
 *
 *   filters:
 *     - module: ./dist/examples/json-route.js
 *       options: { maxBytes: 262144, field: model, allowed: [small, large] }
 *
 * Two halves: the factory's filter runs on the event loop, reads the body and prepares the input (a copy of the
 * body, moved by transfer, and the options the decision needs: the module is imported afresh in each worker thread,
 * where the factory never ran); `offload` runs in the filter worker pool (`--filter-workers N`), or inline with 0.
 *
 * In your own package, import the API from 'actor-edge' instead of '../proxy/api/public.js'.
 */
import { applyDecision, CONTINUE, transferableCopy, type FilterFactory, type OffloadDecision, type OffloadFunction } from '../proxy/api/public.js';

export interface JsonRouteInput {
  readonly body: Uint8Array;
  readonly field: string;
  readonly allowed: readonly string[];
  readonly header: string;
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

function problem(detail: string): OffloadDecision {
  return {
    kind: 'reply',
    reply: {
      status: 400,
      headers: { 'content-type': 'application/problem+json' },
      body: JSON.stringify({ title: 'cannot route this body', status: 400, detail }) + '\n',
      details: `json-route: ${detail}`,
    },
  };
}

/** The offloaded half: pure, it sees only its input. */
export const offload: OffloadFunction<JsonRouteInput> = ({ body, field, allowed, header }) => {
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch (err) {
    return problem(`not JSON: ${(err as Error).message}`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return problem('the body must be a JSON object');
  const value = (doc as Record<string, unknown>)[field];
  if (typeof value !== 'string') return problem(`the body names no ${field}`);
  if (!allowed.includes(value)) return problem(`${field} ${JSON.stringify(value)} is not one of ${allowed.join(', ')}`);
  return { kind: 'continue', setHeaders: { [header]: value } };
};

/** The main-loop half. */
const factory: FilterFactory = ({ options, offload: run }) => {
  const maxBytes = options.maxBytes ?? 262144;
  if (typeof maxBytes !== 'number' || !Number.isInteger(maxBytes) || maxBytes < 0) throw new Error('json-route: options.maxBytes must be a whole number');
  const field = options.field ?? 'model';
  const header = options.header ?? 'x-model';
  const allowed = options.allowed;
  if (typeof field !== 'string' || typeof header !== 'string') throw new Error('json-route: options.field and options.header must be strings');
  if (!Array.isArray(allowed) || allowed.length === 0 || !allowed.every((v) => typeof v === 'string')) throw new Error('json-route: options.allowed must list the values to route');
  if (run === undefined) throw new Error('json-route: loaded without its offload export');
  return {
    name: 'json-route',
    async onRequest(ctx) {
      if (ctx.method !== 'POST' || !JSON_TYPE.test(ctx.headers.get('content-type') ?? '')) return CONTINUE;
      ctx.headers.delete(header); // only this filter names the route
      const read = await ctx.readBody({ limit: maxBytes }); // over the limit: rejects, the proxy answers 413
      const body = transferableCopy(read); // never transfer `read`: the proxy forwards and replays it
      return applyDecision(ctx, await run<JsonRouteInput>(ctx, { body, field, allowed: allowed as string[], header }, { transfer: [body.buffer] }));
    },
  };
};
export default factory;
