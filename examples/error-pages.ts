/**
 * Example filter: branded error pages, using the response phase. Every error the proxy makes up itself — an
 * ext_proc refusal, an unreachable worker, a filter's 401 or 429, a timeout — is replaced with an HTML page in the
 * site's style (same status, same headers otherwise), naming the request id so support can find the access-log
 * line. With `upstream: true` the actors' own 5xx answers are branded too. Place it first in the filter list so
 * it sees the replies of every filter after it.
 *
 *   filters:
 *     - module: ./dist/examples/error-pages.js
 *       options: { site: Example Cloud, upstream: false }
 *
 * In your own package, import the API from 'actor-edge' instead of '../proxy/api/public.js'.
 */
import { reply, type Filter, type FilterFactory, type FilterResponse, type RequestContext, type ResponseResult } from '../proxy/api/public.js';

export interface ErrorPageOptions {
  /** The site name shown on the page. */
  readonly site: string;
  /** Also brand the actors' own 5xx answers (their body is replaced). */
  readonly upstream?: boolean;
}

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad request',
  401: 'Sign-in required',
  403: 'Forbidden',
  404: 'Not found',
  413: 'Request too large',
  429: 'Too many requests',
  500: 'Something went wrong',
  502: 'Bad gateway',
  503: 'Service unavailable',
  504: 'Gateway timeout',
};

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escape = (s: string): string => s.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

export function errorPage(site: string, status: number, requestId: string): string {
  const title = `${status} ${REASONS[status] ?? 'Error'}`;
  return `<!doctype html>\n<html><head><meta charset="utf-8"><title>${escape(title)} · ${escape(site)}</title></head>\n<body><h1>${escape(title)}</h1><p>${escape(site)} could not answer this request.</p><p>Request id: <code>${escape(requestId)}</code></p></body></html>\n`;
}

export function createErrorPagesFilter(opts: ErrorPageOptions): Filter {
  return {
    name: 'error-pages',
    onResponse(ctx: RequestContext, response: FilterResponse): ResponseResult {
      if (response.status < 400) return;
      if (response.source === 'upstream' && !(opts.upstream === true && response.status >= 500)) return;
      const headers: Record<string, string> = {};
      for (const [name, value] of response.headers.entries()) if (name !== 'content-type') headers[name] = value;
      headers['content-type'] = 'text/html; charset=utf-8';
      headers['x-request-id'] = ctx.requestId;
      return reply({
        status: response.status,
        headers,
        body: errorPage(opts.site, response.status, ctx.requestId),
        // No `details`: the access log keeps why the error happened.
      });
    },
  };
}

const factory: FilterFactory = ({ options }) => {
  const site = options.site ?? 'actor-edge';
  if (typeof site !== 'string') throw new Error('error-pages: options.site must be a string');
  const upstream = options.upstream ?? false;
  if (typeof upstream !== 'boolean') throw new Error('error-pages: options.upstream must be true or false');
  return createErrorPagesFilter({ site, upstream });
};
export default factory;
