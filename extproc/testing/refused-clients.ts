/**
 * Test helper: the two clients an mTLS ext_proc listener must refuse, each reporting how it ended. A plaintext
 * gRPC client opening a Process stream (a listener that requires TLS answers it UNAVAILABLE), and a TLS 1.3 client
 * with ALPN h2 and no certificate (told CERTIFICATE_REQUIRED by the handshake).
 */
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { EnvoyLikeClient } from './envoy-like-client.js';

/** One Process stream from a plaintext gRPC client for `authority`: its answer, or the status it failed with. */
export async function plaintextProcess(address: string, authority: string): Promise<string> {
  const client = new EnvoyLikeClient(address, grpc.credentials.createInsecure());
  try {
    const { call, reader } = client.open();
    call.write(EnvoyLikeClient.requestHeadersMessage({ authority }));
    try {
      return (await reader.next()).response ?? 'unknown';
    } catch (err) {
      return grpc.status[(err as grpc.ServiceError).code] ?? 'UNKNOWN';
    } finally {
      call.cancel();
    }
  } finally {
    client.close();
  }
}

/** A TLS 1.3 handshake with ALPN h2 and no client certificate; what the server answered. */
export function tlsWithoutCertificate(address: string): Promise<string> {
  const i = address.lastIndexOf(':');
  return new Promise((resolve) => {
    const socket = tls.connect({ host: address.slice(0, i), port: Number(address.slice(i + 1)), ALPNProtocols: ['h2'], rejectUnauthorized: false });
    socket.once('secureConnect', () => socket.write(Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n')));
    socket.once('data', () => resolve('served'));
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    socket.once('close', () => resolve('closed'));
  });
}
