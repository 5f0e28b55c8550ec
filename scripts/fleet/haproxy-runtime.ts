/**
 * HAProxy's runtime API over its stats socket (one command per connection, as `socat` would send it): the
 * servers' states from `show stat`, and `enable server` / `disable server` for scaling the fleet without a reload.
 */
import net from 'node:net';
import { BACKEND } from './haproxy-config.js';

/** One server of the fleet backend as `show stat` reports it. */
export interface ServerState {
  readonly name: string;
  /** `UP`, `DOWN`, `MAINT`, `UP 1/2` (going down), `DOWN 1/2` (going up), `NOLB`, ... */
  readonly status: string;
  /** The last check's result, e.g. `L7OK`, `L4CON`, `L7STS` (empty when none ran). */
  readonly checkStatus: string;
  /** Sessions since start (how many requests or connections it took). */
  readonly sessions: number;
}

/** Parses `show stat` CSV into the servers of `backend` (the FRONTEND and BACKEND rows left out). */
export function parseServerStates(csv: string, backend = BACKEND): ServerState[] {
  const lines = csv.split('\n').filter((l) => l.trim() !== '');
  const header = lines[0];
  if (header === undefined || !header.startsWith('# ')) throw new Error(`haproxy: unexpected "show stat" answer: ${csv.slice(0, 200)}`);
  const columns = header.slice(2).split(',');
  const col = (name: string): number => {
    const i = columns.indexOf(name);
    if (i === -1) throw new Error(`haproxy: "show stat" has no ${name} column`);
    return i;
  };
  const [px, sv, status, check, stot] = [col('pxname'), col('svname'), col('status'), col('check_status'), col('stot')];
  return lines
    .slice(1)
    .map((l) => l.split(','))
    .filter((f) => f[px] === backend && f[sv] !== 'FRONTEND' && f[sv] !== 'BACKEND')
    .map((f) => ({ name: f[sv] as string, status: f[status] ?? '', checkStatus: f[check] ?? '', sessions: Number(f[stot] ?? 0) }));
}

/** True when HAProxy sends traffic to the server: up and not on its way down. */
export function isUp(s: ServerState): boolean {
  return s.status === 'UP';
}

export class HaproxyRuntime {
  constructor(readonly socketPath: string) {}

  /** Sends one command; resolves with the whole answer. */
  command(cmd: string, timeoutMs = 5000): Promise<string> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(this.socketPath);
      let out = '';
      const timer = setTimeout(() => socket.destroy(new Error(`haproxy: no answer to "${cmd}" within ${timeoutMs} ms`)), timeoutMs);
      socket.setEncoding('utf8');
      socket.on('connect', () => socket.end(`${cmd}\n`));
      socket.on('data', (chunk: string) => (out += chunk));
      socket.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      socket.on('close', () => {
        clearTimeout(timer);
        resolve(out);
      });
    });
  }

  async servers(): Promise<ServerState[]> {
    return parseServerStates(await this.command('show stat'));
  }

  /** Takes a server out of maintenance (a `disabled` one from the config, or one disabled here). */
  async enable(name: string): Promise<void> {
    await this.expectEmpty(`enable server ${BACKEND}/${name}`);
  }

  /** Puts a server in maintenance: no new requests or connections go to it. */
  async disable(name: string): Promise<void> {
    await this.expectEmpty(`disable server ${BACKEND}/${name}`);
  }

  /** Polls the servers until `check` holds for them; throws naming `what` after `timeoutMs`. */
  async waitFor(what: string, check: (servers: readonly ServerState[]) => boolean, timeoutMs = 15_000): Promise<ServerState[]> {
    const deadline = Date.now() + timeoutMs;
    let last: ServerState[] = [];
    for (;;) {
      try {
        last = await this.servers();
        if (check(last)) return last;
      } catch {
        /* the socket may not be there yet */
      }
      if (Date.now() > deadline) throw new Error(`haproxy: timed out waiting for ${what} (servers: ${last.map((s) => `${s.name} ${s.status}`).join(', ')})`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Waits until server `name` is up (or, with `up` false, no longer up). */
  waitServer(name: string, up: boolean, timeoutMs?: number): Promise<ServerState[]> {
    return this.waitFor(`${name} ${up ? 'up' : 'down'}`, (all) => all.some((s) => s.name === name && isUp(s) === up), timeoutMs);
  }

  private async expectEmpty(cmd: string): Promise<void> {
    const answer = (await this.command(cmd)).trim();
    if (answer !== '') throw new Error(`haproxy: "${cmd}": ${answer}`);
  }
}
