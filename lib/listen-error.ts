/**
 * A listener that cannot bind, told in one line: the component, the address, why, and the setting that moves it
 * (`extproc: 127.0.0.1:50052 is already in use (set EXTPROC_LISTEN or --listen)`). The usual cause is a second
 * `npm start` beside a running one; a stack trace from deep inside node:net or grpc-js says nothing about what to
 * change. Every component wraps each of its binds in `listening` (and grpc binds also in `assertFree`, because
 * grpc-js logs its own error line before it rejects); `cli/main.ts` prints a ListenError without a stack.
 */
import net from 'node:net';
import { formatHostPort } from './address.js';

/** The setting that chooses a listener's address: its environment variable and flag. */
export interface ListenSetting {
  readonly env: string;
  readonly flag: string;
}

/** What a bind failure's system error code means to the operator. */
const REASONS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'is already in use',
  EACCES: 'is not permitted (ports below 1024 need privileges)',
  EADDRNOTAVAIL: 'is not an address of this machine',
};

export class ListenError extends Error {
  override readonly name = 'ListenError';
  constructor(
    readonly component: string,
    readonly address: string,
    readonly code: string,
    readonly setting: ListenSetting,
  ) {
    super(`${component}: ${address} ${REASONS[code] ?? `cannot be bound (${code})`} (set ${setting.env} or ${setting.flag})`);
  }
}

/** The bind error code of `err`: node:net's `code`, or the one grpc-js writes into its message. */
function bindCode(err: unknown): string | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string' && code in REASONS) return code;
  const message = err instanceof Error ? err.message : '';
  return Object.keys(REASONS).find((c) => message.includes(c));
}

/** Runs `bind`; a bind failure of `host:port` becomes a ListenError naming `setting`, anything else passes. */
export async function listening<T>(component: string, host: string, port: number, setting: ListenSetting, bind: () => Promise<T>): Promise<T> {
  try {
    return await bind();
  } catch (err) {
    const code = bindCode(err);
    if (code === undefined) throw err;
    throw new ListenError(component, formatHostPort(host, port), code, setting);
  }
}

/**
 * Throws the ListenError a bind of `host:port` would meet, by binding it once and letting go (port 0 is always
 * free). For grpc-js, which logs "No address added" on its own before it rejects a bind.
 */
export async function assertFree(component: string, host: string, port: number, setting: ListenSetting): Promise<void> {
  if (port === 0) return;
  const probe = net.createServer();
  await listening(
    component,
    host,
    port,
    setting,
    () =>
      new Promise<void>((resolve, reject) => {
        probe.once('error', reject);
        probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
      }),
  );
}

/** `{ env, flag }` of flag `name` in a component's declarations. */
export function settingOf(flags: Readonly<Record<string, { readonly env: string }>>, name: string): ListenSetting {
  const spec = flags[name];
  if (spec === undefined) throw new Error(`no flag --${name}`);
  return { env: spec.env, flag: `--${name}` };
}
