/**
 * One request on the egress listener as the CONNECT handler sees it, whichever protocol carried it
 * (`h1-egress-request.ts`, `h2-egress-request.ts`): its method and authority, the connection it came on (with the
 * certificate check made once for that connection), its departure (the actor going away before its answer), and the two ways to answer
 * it — a refusal, or 200 and the tunnel.
 */
import type { ActorCertificateCheck } from '../../lib/egress/actor-certificate.js';
import type { DepartureWatch } from './departure.js';
import type { ActorSide } from './tunnel.js';

/** One TLS connection to the egress listener: what its client certificate is, checked once. */
export interface EgressConnection {
  readonly check: ActorCertificateCheck;
  /** The actor's leaf certificate, PEM (what ext_proc is sent); undefined without one. */
  readonly certificatePem: string | undefined;
  readonly remoteAddress: string;
}

/** The actor's side of an accepted CONNECT, and the bytes it sent after its CONNECT head. */
export interface AcceptedConnect extends ActorSide {
  readonly head: Buffer;
}

export interface EgressRequest {
  readonly protocol: 'http/1.1' | 'h2';
  readonly method: string;
  /** The authority as received (`CONNECT <authority>`, or `:authority`). */
  readonly authority: string;
  readonly connection: EgressConnection;
  /** Left when the actor goes away before it is answered. */
  readonly gone: DepartureWatch;
  /** True once an answer (a refusal or the 200) was sent. */
  readonly answered: boolean;
  /** Answers `status` with a text body and ends the request (HTTP/1.1: the connection closes after it). */
  refuse(status: number, body: string, headers?: Readonly<Record<string, string>>): void;
  /** Answers 200 and hands over the actor's side; undefined when the actor is already gone. */
  accept(): AcceptedConnect | undefined;
  /** Ends it without (more of) an answer. */
  destroy(): void;
}
