/** Test helper: a chunked POST through a proxy whose head is sent now and whose body the test sends when it says. */
import http from 'node:http';

export interface HeldPost {
  /** Sends part of the body now. */
  write(chunk: string | Buffer): void;
  /** Sends the rest of the body and resolves with the answer. */
  finish(body: string | Buffer): Promise<{ status: number; body: string }>;
  /** Hangs up if the body was not finished. */
  abandon(): void;
}

export function startHeldPost(ingress: string, host: string, requestId: string, path = '/late'): HeldPost {
  const url = new URL(ingress);
  const req = http.request({
    host: url.hostname,
    port: url.port,
    method: 'POST',
    path,
    headers: { host, 'x-request-id': requestId, 'transfer-encoding': 'chunked' },
    agent: false,
  });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
  });
  answer.catch(() => undefined);
  req.flushHeaders();
  return {
    write: (chunk) => void req.write(chunk),
    finish(body) {
      req.end(body);
      return answer;
    },
    abandon() {
      if (!req.writableEnded) req.destroy();
    },
  };
}
