/**
 * ext-proc's re-validation of one actor for refresh-ahead: one `Process` stream carrying exactly the
 * request_headers message Envoy would send for `GET /` to the actor's host (with `end_of_stream`, a request id
 * and `x-forwarded-proto`, as the ingress adds them), then closed. Only the answer's `original_dst` metadata is
 * read: a literal `ip:port` there is the actor's address; an immediate response, an error, a timeout, a missing
 * or non-literal address is a failure. Header mutations are ignored (there is no request to apply them to).
 */
import { isLiteralAddress } from '../../http/route-address.js';
import { nextRequestId } from '../../request/request-id.js';
import type { RevalidateRequest, Revalidation, Revalidator } from '../revalidator.js';
import type { MessageResult, ExtProcClient } from './client.js';
import { originalDstOf } from './metadata.js';
import type { ExtProcSettings } from './settings.js';
import { httpStatusOf } from './messages.js';
import { protocolConfig, requestHeadersMessage, type RequestHead } from './translate.js';

/** `forwardRules`: the same `forward_rules` a request's own round trip obeys. */
export function createExtProcRevalidator(client: Pick<ExtProcClient, 'open'>, forwardRules: ExtProcSettings['forwardRules']): Revalidator {
  return {
    async revalidate(request: RevalidateRequest, signal: AbortSignal): Promise<Revalidation> {
      if (signal.aborted) return failed('shutting down');
      const stream = client.open();
      try {
        const message = { ...requestHeadersMessage(refreshHead(request), true, forwardRules), protocol_config: protocolConfig('NONE') };
        return revalidationOf(await stream.roundTrip(message, signal));
      } finally {
        stream.close();
      }
    },
  };
}

/** The head of the request a refresh stands for: `GET /` to the actor's host. */
export function refreshHead(request: RevalidateRequest): RequestHead {
  const headers: [string, string][] = [
    ['x-request-id', nextRequestId()],
    ['x-forwarded-proto', request.scheme],
  ];
  return { authority: request.authority, path: '/', method: 'GET', scheme: request.scheme, headers: { entries: () => headers[Symbol.iterator]() } };
}

export function revalidationOf(result: MessageResult): Revalidation {
  switch (result.kind) {
    case 'response': {
      const msg = result.response;
      if (msg.immediate_response != null) return failed(`immediate response ${httpStatusOf(msg.immediate_response.status?.code ?? undefined) || 200}`);
      if (msg.request_headers == null) return failed(`expected a request_headers response, got ${msg.response ?? 'nothing'}`);
      const local = originalDstOf(msg);
      if (local === undefined) return failed('no original_dst in the answer');
      if (!isLiteralAddress(local)) return failed(`original_dst "${local}" is not a literal ip:port`);
      return { kind: 'routed', address: local };
    }
    case 'error':
      return failed(`stream error ${result.code}: ${result.details}`);
    case 'timeout':
      return failed('message timeout');
    case 'closed':
      return failed('the processor closed the stream');
    case 'aborted':
      return failed('aborted');
  }
}

function failed(reason: string): Revalidation {
  return { kind: 'failed', reason };
}
