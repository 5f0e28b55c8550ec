/**
 * Test helper: upstream answers as the router hands them to the chain, for scripted routers in unit tests — an
 * `UpstreamResponse` whose body (given chunks, then the end) flows as soon as the chain pipes it.
 */
import type { UpstreamOutcome } from '../api/filter.js';
import { UpstreamResponse, type BodySink, type UpstreamBody } from '../upstream/response.js';
import type { UpstreamFailure } from '../upstream/outcome.js';

class ScriptedBody implements UpstreamBody {
  aborted: string | undefined;
  constructor(private readonly chunks: readonly Buffer[]) {}
  pipe(sink: BodySink): void {
    for (const c of this.chunks) sink.data(c);
    sink.end(null);
  }
  resume(): void {}
  abort(reason: string): void {
    this.aborted = reason;
  }
  failure(): UpstreamFailure | undefined {
    return undefined;
  }
}

/** An answer with `status`, `headers` (a flat list) and a body of `body`. */
export function upstreamAnswer(status: number, headers: string[] = [], body = ''): UpstreamResponse {
  return new UpstreamResponse(status, headers, undefined, new ScriptedBody(body === '' ? [] : [Buffer.from(body)]), undefined);
}

/** What a scripted router hands the chain for a scripted outcome: an answer for `response`, the outcome itself otherwise. */
export function attemptOf(o: UpstreamOutcome): UpstreamResponse | UpstreamFailure {
  return o.kind === 'response' ? upstreamAnswer(o.status) : o;
}
