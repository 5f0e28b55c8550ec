/**
 * Loopback addresses for stacks started on one machine (the benchmark's, the tests'): a free TCP port, and a
 * private network of simulated worker addresses, so stacks running side by side never collide.
 */
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** The lowest port freePort() picks: above the well-known and most registered service ports. */
const LOWEST_PORT = 10_000;
/** Random ports tried before falling back to one the kernel picks. */
const PICKS = 64;

/**
 * The first port of the range the kernel hands out as the source port of outgoing connections (Linux:
 * /proc/sys/net/ipv4/ip_local_port_range; elsewhere the IANA range's 49152).
 */
export function ephemeralPortStart(read: () => string = () => readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')): number {
  try {
    const low = Number(read().trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 0 && low <= 65_535 ? low : 49_152;
  } catch {
    return 49_152;
  }
}

function tryListen(port: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(undefined) : reject(err)));
    s.listen(port, '127.0.0.1', () => {
      const a = s.address() as net.AddressInfo;
      s.close(() => resolve(a.port));
    });
  });
}

/**
 * A TCP port that was free on 127.0.0.1 a moment ago: nothing listens there (connections are refused).
 *
 * It is picked at random below the kernel's ephemeral range, never from it: a port from that range can become the
 * source port of any process's outgoing connection (or sit in TIME_WAIT as one) while its component is starting or
 * is stopped to be started again on the same address, and the listen then fails with EADDRINUSE. Only where no
 * such port is free (a range that starts too low, every pick taken) does the kernel pick one.
 */
export async function freePort(): Promise<number> {
  const top = ephemeralPortStart() - 1;
  if (top - LOWEST_PORT >= 1_000) {
    for (let i = 0; i < PICKS; i++) {
      const port = await tryListen(LOWEST_PORT + Math.floor(Math.random() * (top - LOWEST_PORT + 1)));
      if (port !== undefined) return port;
    }
  }
  const port = await tryListen(0);
  if (port === undefined) throw new Error('freePort: the kernel found no free port on 127.0.0.1');
  return port;
}

/**
 * A private worker network for one stack: a random first worker IP in 127.16.0.0-127.254.x.x (Linux routes all of
 * 127.0.0.0/8 to loopback) and a free port.
 */
export async function workerNet(): Promise<{ ipBase: string; port: number }> {
  const b = 16 + Math.floor(Math.random() * 238);
  const c = Math.floor(Math.random() * 256);
  return { ipBase: `127.${b}.${c}.1`, port: await freePort() };
}
