/** The messages between the cluster primary and its proxy workers (node:cluster IPC). */

/** Worker → primary: the worker listens; its ingress and internal admin addresses. */
export const LISTENING = 'actor-edge:listening';
/** Primary → worker: drain and exit. */
export const DRAIN = 'actor-edge:drain';

export interface ListeningMessage {
  readonly type: typeof LISTENING;
  readonly ingress: string;
  readonly admin: string;
}
