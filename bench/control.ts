/**
 * The benchmark's own ateapi.Control client, used only to prepare the stage (wake every actor before a hot run)
 * and never during a measured window.
 */
import * as grpc from '@grpc/grpc-js';
import { loadProto, lookup } from '../lib/proto.js';
import { CONTROL_PROTO, CONTROL_SERVICE } from '../lib/wire-contract.js';

interface ResumeClient extends grpc.Client {
  ResumeActor(
    req: { actor_ref: { atespace: string; name: string } },
    opts: grpc.CallOptions,
    cb: (err: grpc.ServiceError | null, res?: { actor?: { ateom_pod_ip?: string } }) => void,
  ): grpc.ClientUnaryCall;
}

type ClientCtor = new (address: string, creds: grpc.ChannelCredentials) => ResumeClient;

function resumeOnce(client: ResumeClient, atespace: string, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    client.ResumeActor({ actor_ref: { atespace, name } }, { deadline: Date.now() + 30_000 }, (err) => (err ? reject(err) : resolve()));
  });
}

/** Runs `fn` over `items`, at most `concurrency` at a time. */
export async function forEachLimited<T>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/**
 * Resumes every actor (a no-op for running ones), `concurrency` at a time. ABORTED (another operation in
 * progress) is retried; any other error is thrown. `credentials`: TLS to the control plane; absent: plaintext.
 */
export async function resumeAll(
  address: string,
  atespace: string,
  names: readonly string[],
  concurrency = 64,
  credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure(),
): Promise<void> {
  const Control = lookup<ClientCtor>(loadProto(CONTROL_PROTO), CONTROL_SERVICE);
  const client = new Control(address, credentials);
  const resume = async (name: string): Promise<void> => {
    for (let attempt = 0; ; attempt++) {
      try {
        await resumeOnce(client, atespace, name);
        return;
      } catch (err) {
        const code = (err as grpc.ServiceError).code;
        if (code !== grpc.status.ABORTED || attempt > 50) throw new Error(`ResumeActor ${atespace}/${name}: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  };
  try {
    await forEachLimited(names, concurrency, resume);
  } finally {
    client.close();
  }
}
