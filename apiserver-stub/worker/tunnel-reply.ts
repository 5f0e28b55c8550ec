/**
 * What the actor's app writes its answer through: the worker's side of the tunnel. The app never touches the
 * socket, so the worker can enforce that an actor cannot forge the stale-assignment signal: the header
 * X-Ate-Assignment-Stale is removed from every response head the app writes.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { STALE_HEADER } from '../../lib/wire-contract.js';

export interface AppReply {
  head(status: number, headers: OutgoingHttpHeaders): void;
  write(chunk: string | Buffer): void;
  end(chunk?: string | Buffer): void;
  /** Called once if the response is torn down before it ends (client gone, actor deactivated). */
  onAbort(listener: () => void): void;
}

/** Removes the stale header in any letter case; returns the same object. */
export function stripStale(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  for (const name in headers) {
    if (name.length === STALE_HEADER.length && name.toLowerCase() === STALE_HEADER) delete headers[name];
  }
  return headers;
}

export class TunnelReply implements AppReply {
  constructor(private readonly res: ServerResponse) {}

  head(status: number, headers: OutgoingHttpHeaders): void {
    this.res.writeHead(status, stripStale(headers));
  }

  write(chunk: string | Buffer): void {
    this.res.write(chunk);
  }

  end(chunk?: string | Buffer): void {
    if (chunk === undefined) this.res.end();
    else this.res.end(chunk);
  }

  onAbort(listener: () => void): void {
    this.res.once('close', () => {
      if (!this.res.writableFinished) listener();
    });
  }
}
