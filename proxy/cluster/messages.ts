/** The messages between the cluster primary and its proxy workers (node:cluster IPC). */

/** Worker → primary: the worker listens; its ingress and internal admin addresses. */
export const LISTENING = 'actor-edge:listening';
/** Primary → worker: stop accepting connections (keep serving the open ones as usual), then confirm. */
export const STOP_ACCEPTING = 'actor-edge:stop-accepting';
/** Worker → primary: the worker no longer accepts connections. */
export const ACCEPTING_STOPPED = 'actor-edge:accepting-stopped';
/** Primary → worker: drain and exit. */
export const DRAIN = 'actor-edge:drain';

export interface ListeningMessage {
  readonly type: typeof LISTENING;
  readonly ingress: string;
  readonly tls?: string;
  readonly admin: string;
  /** The CONNECT listener (`--connect-listen`), shared like the ingress. */
  readonly connect?: string;
  /** The CONNECT-over-TLS listener (`--connect-tls-listen`), shared the same way. */
  readonly connectTls?: string;
  /** The egress listener (`--egress-listen`), shared the same way. */
  readonly egress?: string;
}
