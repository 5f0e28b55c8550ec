/**
 * Loopback addresses for stacks started on one machine (the benchmark's, the tests'): a free TCP port, and a
 * private network of simulated worker addresses, so stacks running side by side never collide.
 */
import net from 'node:net';

/** A TCP port that was free on 127.0.0.1 a moment ago: nothing listens there (connections are refused). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address() as net.AddressInfo;
      s.close(() => resolve(a.port));
    });
  });
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
