/**
 * The worker tunnel's request path: which actor does Host name (lib/actor-ref.ts rules), is it active here?
 * No → 421 + X-Ate-Assignment-Stale: true, body `misdirected request`. Yes → record the delivery, remove the
 * routing headers, hand the request to the actor's app through a TunnelReply (which strips the stale header).
 */
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { parseActorHost } from '../../lib/actor-ref.js';
import type { ActivationTable } from './activations.js';
import { demoApp } from './demo-app.js';
import { STALE_HEADER, STALE_HEADER_VALUE, STALE_STATUS, TARGET_ACTOR_HEADER, TARGET_PORT_HEADER } from '../../lib/wire-contract.js';
import { TunnelReply } from './tunnel-reply.js';

export const MISDIRECTED_BODY = 'misdirected request';
const MISDIRECTED_HEADERS = Object.freeze({
  'content-type': 'text/plain',
  'content-length': String(MISDIRECTED_BODY.length),
  [STALE_HEADER]: STALE_HEADER_VALUE,
});
const HOST_CACHE_MAX = 4096;

/** Host → actor key (null: not an actor host). Bounded; cleared when full. */
export class HostCache {
  private readonly map = new Map<string, string | null>();
  constructor(private readonly suffix: string) {}

  key(host: string | undefined): string | null {
    if (host === undefined) return null;
    let key = this.map.get(host);
    if (key === undefined) {
      const parsed = parseActorHost(host, this.suffix);
      key = parsed.kind === 'ok' ? parsed.actor.key : null;
      if (this.map.size >= HOST_CACHE_MAX) this.map.clear();
      this.map.set(host, key);
    }
    return key;
  }
}

export function createRequestHandler(workerIp: string, table: ActivationTable, actorSuffix: string): RequestListener {
  const hosts = new HostCache(actorSuffix);
  return (req: IncomingMessage, res: ServerResponse): void => {
    const key = hosts.key(req.headers.host);
    const activation = key === null ? undefined : table.get(key);
    if (activation === undefined) {
      table.misdirected++;
      res.writeHead(STALE_STATUS, MISDIRECTED_HEADERS);
      res.end(MISDIRECTED_BODY);
      return;
    }
    const headers = req.headers;
    delete headers[TARGET_PORT_HEADER];
    delete headers[TARGET_ACTOR_HEADER];
    const rawId = headers['x-request-id'];
    const requestId = typeof rawId === 'string' ? rawId : undefined;
    const seq = activation.deliver(requestId);
    const later = demoApp(req, new TunnelReply(res), {
      atespace: activation.ref.atespace,
      actor: activation.ref.name,
      worker: workerIp,
      seq,
      requestId: requestId ?? null,
    });
    if (later && !res.writableFinished) {
      activation.inflight.add(res);
      res.once('close', () => activation.inflight.delete(res));
    }
  };
}
