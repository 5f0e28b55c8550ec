/** Test helper: a loopback port some other listener already holds, as a second `npm start` finds its ports. */
import net from 'node:net';

export interface TakenPort {
  readonly port: number;
  /** `127.0.0.1:PORT`. */
  readonly address: string;
  release(): Promise<void>;
}

export async function takePort(): Promise<TakenPort> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;
  return { port, address: `127.0.0.1:${port}`, release: () => new Promise((resolve) => server.close(() => resolve())) };
}
