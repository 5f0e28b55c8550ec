/**
 * One request-headers round trip on a client of its own: whether the proxy's ext_proc client, as configured, gets an
 * answer from a processor — the compose check's proof that the hop is mTLS both ways (extproc reached, an impostor
 * refused), and the TLS tests' one round trip.
 */
import type { Logger } from 'pino';
import { Counters } from '../../ops/stats.js';
import { GrpcExtProcClient, type ExtProcClientOptions } from './grpc-client.js';
import type { ProcessingRequest } from './messages.js';

export type ProbeOptions = Pick<ExtProcClientOptions, 'address' | 'messageTimeoutMs' | 'tls'> & {
  readonly log: Logger;
  /** The `:authority` of the request headers sent. */
  readonly authority: string;
};

/** `response` when the processor answered; otherwise the failure: its gRPC status name, or `closed`/`timeout`/`aborted`. */
export async function probeExtProc(opts: ProbeOptions): Promise<string> {
  const { authority, ...clientOptions } = opts;
  const client = new GrpcExtProcClient({ ...clientOptions, counters: new Counters() });
  const headers: ProcessingRequest = { request_headers: { headers: { headers: [{ key: ':authority', raw_value: Buffer.from(authority) }] }, end_of_stream: true } };
  try {
    const stream = client.open();
    const r = await stream.roundTrip(headers);
    stream.close();
    return r.kind === 'response' ? 'response' : r.kind === 'error' ? r.code : r.kind;
  } finally {
    client.close();
  }
}
