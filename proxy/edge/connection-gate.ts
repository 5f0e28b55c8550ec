/**
 * `--max-connections`: one count of open client connections over every client listener together (the plaintext
 * and HTTPS ingress, both CONNECT listeners; never the admin listener), asked as each connection is accepted
 * (`listeners.ts`). Past the limit, or while the overload manager sheds (`shed-misses` and above), a new connection
 * is closed at once, before a byte of it is read, and counted by reason. A connection counts until its socket
 * closes; one shared close listener per socket, no allocation per connection.
 */
import type { Socket } from 'node:net';
import type { ConnectionAdmission } from './listeners.js';

/** What the gate counts (`ops/overload/tallies.ts`). */
export interface ConnectionTallies {
  connectionsOpen: number;
  readonly connectionsRefused: { limit: number; overload: number };
}

export class ConnectionGate implements ConnectionAdmission {
  readonly #release = (): void => {
    this.tallies.connectionsOpen--;
  };

  constructor(
    /** 0: no limit. */
    readonly max: number,
    readonly tallies: ConnectionTallies,
    /** Counts and says whether a connection is refused because of overload (the overload manager). */
    private readonly overload?: { refuseConnection(): boolean },
  ) {}

  admit(socket: Socket): boolean {
    if (this.max > 0 && this.tallies.connectionsOpen >= this.max) {
      this.tallies.connectionsRefused.limit++;
      return false;
    }
    if (this.overload?.refuseConnection() === true) return false;
    this.tallies.connectionsOpen++;
    socket.on('close', this.#release);
    return true;
  }
}
