/**
 * Example filter: a JSON body validator, using `ctx.readBody`. A POST, PUT or PATCH whose Content-Type is JSON
 * must carry a body that parses as a JSON object with the configured top-level fields; otherwise the proxy answers
 * 400 (with a JSON problem description) and the actor is never woken. A body over `maxBytes` gets 413
 * `PROXY_ERR_BODY_TOO_LARGE`. A valid body is forwarded unchanged (reading it does not consume it).
 *
 *   filters:
 *     - module: ./dist/examples/json-body.js
 *       options: { maxBytes: 65536, required: [type, payload] }
 *
 * In your own package, import the API from 'actor-edge' instead of '../proxy/api/public.js'.
 */
import { CONTINUE, reply, type Filter, type FilterFactory, type FilterResult, type RequestContext } from '../proxy/api/public.js';

export interface JsonBodyOptions {
  /** The largest body accepted (bytes). */
  readonly maxBytes: number;
  /** Top-level fields the object must have. */
  readonly required?: readonly string[];
}

const CHECKED_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH']);
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

function problem(detail: string): FilterResult {
  return reply({
    status: 400,
    headers: { 'content-type': 'application/problem+json' },
    body: JSON.stringify({ title: 'invalid JSON body', status: 400, detail }) + '\n',
    details: `json-body: ${detail}`,
  });
}

export function createJsonBodyFilter(opts: JsonBodyOptions): Filter {
  const required = opts.required ?? [];
  return {
    name: 'json-body',
    async onRequest(ctx: RequestContext): Promise<FilterResult> {
      if (!CHECKED_METHODS.has(ctx.method) || !JSON_TYPE.test(ctx.headers.get('content-type') ?? '')) return CONTINUE;
      const body = await ctx.readBody({ limit: opts.maxBytes }); // over the limit: rejects, the proxy answers 413
      let doc: unknown;
      try {
        doc = JSON.parse(Buffer.from(body).toString('utf8'));
      } catch (err) {
        return problem(`not JSON: ${(err as Error).message}`);
      }
      if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return problem('the body must be a JSON object');
      const missing = required.filter((field) => !Object.hasOwn(doc as object, field));
      if (missing.length > 0) return problem(`missing field(s): ${missing.join(', ')}`);
      return CONTINUE;
    },
  };
}

const factory: FilterFactory = ({ options }) => {
  const maxBytes = options.maxBytes ?? 65536;
  if (typeof maxBytes !== 'number' || !Number.isInteger(maxBytes) || maxBytes < 0) throw new Error('json-body: options.maxBytes must be a whole number');
  const required = options.required ?? [];
  if (!Array.isArray(required) || !required.every((f) => typeof f === 'string')) throw new Error('json-body: options.required must be a list of field names');
  return createJsonBodyFilter({ maxBytes, required: required as string[] });
};
export default factory;
