/**
 * The request as a header-mutation target: its forwarded headers, plus the two request-line pseudo-headers a
 * processor may set — `:path` (origin-form only) and `:method` (a token; only with `allow_all_routing`) — which
 * hold for this attempt (a re-run starts from the ingress request line).
 */
import type { ProxyRequest } from '../../request/context.js';
import { isOriginForm, type HeaderTarget } from './mutation.js';

const PSEUDO: ReadonlySet<string> = new Set([':path', ':method']);
const METHOD = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export class RequestLineTarget implements HeaderTarget {
  readonly pseudo = PSEUDO;
  constructor(private readonly ctx: ProxyRequest) {}

  setPseudo(name: string, value: string): string | undefined {
    if (name === ':path') {
      if (!isOriginForm(value)) return `:path "${value}" is not origin-form`;
      this.ctx.path = value;
      return undefined;
    }
    if (!METHOD.test(value)) return `:method "${value}" is not a method`;
    this.ctx.method = value;
    return undefined;
  }

  set(name: string, value: string): void {
    this.ctx.headers.set(name, value);
  }

  append(name: string, value: string): void {
    this.ctx.headers.append(name, value);
  }

  delete(name: string): void {
    this.ctx.headers.delete(name);
  }
}
