/**
 * The response a filter's `onResponse` sees and may change (`response-phase.ts`): the upstream's final head, or
 * a local reply (a later filter's, ext_proc's, or one of the proxy's catalog errors). Its headers are the one
 * copy-on-write header list (`http/header-list.ts`), checked as the proxy checks every header it relays.
 */
import type { FilterResponse } from '../api/filter.js';
import { ResponseHeaders } from '../http/header-list.js';
import type { MultiValueLocalReply } from '../http/local-reply.js';

/** The response a filter's `onResponse` sees (and may change). */
export class ChainResponse implements FilterResponse {
  #headers: ResponseHeaders;
  #status: number;

  private constructor(
    readonly source: 'upstream' | 'local',
    status: number,
    headers: string[],
    readonly errorCode: string | undefined,
    /** A local reply's body and log details (kept as they were). */
    readonly reply: MultiValueLocalReply | undefined,
  ) {
    this.#status = status;
    this.#headers = new ResponseHeaders(headers);
  }

  get headers(): ResponseHeaders {
    return this.#headers;
  }

  /** The upstream's head: its status and the relayed header list (copied only when a filter changes it). */
  static upstream(status: number, headers: string[]): ChainResponse {
    return new ChainResponse('upstream', status, headers, undefined, undefined);
  }

  static local(reply: MultiValueLocalReply, errorCode: string | undefined): ChainResponse {
    const list: string[] = [];
    for (const [name, value] of Object.entries(reply.headers ?? {})) {
      if (typeof value === 'string') list.push(name.toLowerCase(), value);
      else for (const v of value) list.push(name.toLowerCase(), v);
    }
    return new ChainResponse('local', reply.status, list, errorCode, reply);
  }

  get status(): number {
    return this.#status;
  }

  set status(value: number) {
    if (!Number.isInteger(value) || value < 200 || value > 599) throw new TypeError(`response status ${String(value)} is not a whole number from 200 to 599`);
    this.#status = value;
  }

  /**
   * For a built-in stage (ext_proc's response headers exchange), which applies its processor's mutations under
   * its own rules: the head as the stage decided it, without the checks a filter's changes go through.
   */
  replaceHead(status: number, headers: string[]): void {
    this.#status = status;
    this.#headers = new ResponseHeaders(headers);
  }

  toLocalReply(): MultiValueLocalReply {
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of this.headers.entries()) {
      const seen = headers[name];
      headers[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
    }
    const reply = this.reply;
    return { status: this.#status, headers, ...(reply?.body !== undefined ? { body: reply.body } : {}), ...(reply?.details !== undefined ? { details: reply.details } : {}) };
  }
}
