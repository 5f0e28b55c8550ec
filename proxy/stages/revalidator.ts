/**
 * A resolver's background re-validation of one actor, for refresh-ahead: the resolver answers where the actor is
 * now, as it would for a request to it (ext-proc: one `Process` stream with the request headers of a `GET /` to
 * the actor's host), without a client request behind it. The cache learns only from what this returns.
 */

export type Revalidation =
  /** The resolver routed the actor to this literal `ip:port`. */
  | { readonly kind: 'routed'; readonly address: string }
  /** Anything else (an immediate response, an error, a timeout, no route): `reason` is for the log. */
  | { readonly kind: 'failed'; readonly reason: string };

export interface RevalidateRequest {
  /** The authority of the request that used the binding (names the actor, as the client wrote it). */
  readonly authority: string;
  readonly scheme: 'http' | 'https';
}

export interface Revalidator {
  /** Never rejects; `signal` aborts the re-validation (at shutdown). */
  revalidate(request: RevalidateRequest, signal: AbortSignal): Promise<Revalidation>;
}
