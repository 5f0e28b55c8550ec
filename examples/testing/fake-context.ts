/** The examples' tests' short forms of the test kit's fakes (`actor-edge/testing`, kit/fake-request.ts). */
import { fakeFilterContext, fakeRequest, fakeResponse as kitResponse } from '../../kit/index.js';
import type { FilterResponse, RequestContext } from '../../proxy/api/public.js';

export { fakeFilterContext };

export interface FakeRequest {
  readonly method?: string;
  readonly path?: string;
  readonly body?: string;
  readonly attempt?: number;
}

/** A request to `authority` with `headers`; a number is the attempt. */
export function fakeContext(authority: string, headers: Record<string, string> = {}, request: FakeRequest | number = {}): RequestContext {
  const r: FakeRequest = typeof request === 'number' ? { attempt: request } : request;
  return fakeRequest({ authority, headers, ...r });
}

/** A response as `onResponse` sees it. */
export function fakeResponse(status: number, headers: Record<string, string> = {}, source: 'upstream' | 'local' = 'upstream', errorCode?: string): FilterResponse {
  return kitResponse({ status, headers, source, ...(errorCode === undefined ? {} : { errorCode }) });
}
