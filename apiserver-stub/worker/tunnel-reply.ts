/**
 * What the actor's app writes its answer through: the worker's side of the tunnel. The app never touches the
 * socket, so the worker can enforce that an actor cannot forge the stale-assignment signal: the header
 * X-Ate-Assignment-Stale is removed from every response head the app writes. It also holds the app to the
 * Content-Length it declared, so an app can never put a second (forged) response on a shared connection: bytes
 * past the declared length are dropped and the connection is closed once the response is out; a response that
 * ends short of its length closes the connection too (the client sees a truncated body, not a desynchronised
 * stream).
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

/** The body length the head declares (the smallest, if the app sent several), or undefined when it declares none. */
export function declaredLength(headers: OutgoingHttpHeaders): number | undefined {
  let length: number | undefined;
  for (const name in headers) {
    if (name.length !== 14 || name.toLowerCase() !== 'content-length') continue;
    const n = Number(headers[name]);
    if (Number.isInteger(n) && n >= 0 && (length === undefined || n < length)) length = n;
  }
  return length;
}

type Fit = { readonly kind: 'fits' } | { readonly kind: 'overflow'; readonly fitting: Buffer };
const FITS: Fit = Object.freeze({ kind: 'fits' });

export class TunnelReply implements AppReply {
  /** Body bytes the head allows; undefined: no Content-Length (chunked or close-delimited framing). */
  private remaining: number | undefined;
  private cut = false;

  constructor(private readonly res: ServerResponse) {}

  head(status: number, headers: OutgoingHttpHeaders): void {
    this.remaining = declaredLength(headers);
    this.res.writeHead(status, stripStale(headers));
  }

  write(chunk: string | Buffer): void {
    if (this.cut) return;
    const fit = this.fit(chunk);
    if (fit.kind === 'fits') this.res.write(chunk);
    else this.cutAfter(fit.fitting);
  }

  end(chunk?: string | Buffer): void {
    if (this.cut) return;
    const fit: Fit = chunk === undefined ? FITS : this.fit(chunk);
    if (fit.kind === 'overflow') {
      this.cutAfter(fit.fitting);
      return;
    }
    if (this.remaining !== undefined && this.remaining > 0) this.closeWhenFinished();
    if (chunk === undefined) this.res.end();
    else this.res.end(chunk);
  }

  /** Counts `chunk` against the declared length; on overflow, the bytes that still fit. */
  private fit(chunk: string | Buffer): Fit {
    if (this.remaining === undefined) return FITS;
    const size = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    if (size <= this.remaining) {
      this.remaining -= size;
      return FITS;
    }
    const fitting = (typeof chunk === 'string' ? Buffer.from(chunk) : chunk).subarray(0, this.remaining);
    this.remaining = 0;
    return { kind: 'overflow', fitting };
  }

  /** The app wrote past its Content-Length: send what fits, then close the connection. */
  private cutAfter(fitting: Buffer): void {
    this.cut = true;
    this.closeWhenFinished();
    this.res.end(fitting);
  }

  private closeWhenFinished(): void {
    const socket = this.res.socket;
    this.res.once('finish', () => socket?.destroySoon());
  }

  onAbort(listener: () => void): void {
    this.res.once('close', () => {
      if (!this.res.writableFinished) listener();
    });
  }
}
