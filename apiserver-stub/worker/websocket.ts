/**
 * The demo app's WebSocket endpoint (any path): a handshake for an actor active on this worker is accepted (and
 * counted as a delivery, like a request); every message is echoed back as JSON naming the actor, the worker and
 * the message's sequence number on that socket. A handshake for an actor not active here gets the stale answer
 * (421 + X-Ate-Assignment-Stale: true), exactly as a request would; when the actor is suspended or moved away its
 * open sockets are closed (`ActivationTable.deactivate`).
 *
 * A message `{"flood": N}` makes the socket send N bytes back in 64 KiB messages, each sent only once the one
 * before it left the worker's buffer (a client that stops reading stalls the worker; tests use it for
 * backpressure).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import { STALE_HEADER, STALE_HEADER_VALUE, STALE_STATUS, TARGET_ACTOR_HEADER, TARGET_PORT_HEADER } from '../../lib/wire-contract.js';
import type { Activation, ActivationTable } from './activations.js';
import { HostCache } from './request-handler.js';

const MAX_PAYLOAD = 1024 * 1024;
const FLOOD_CHUNK = 64 * 1024;
const MAX_FLOOD = 1024 * 1024 * 1024;
const MISDIRECTED =
  `HTTP/1.1 ${STALE_STATUS} Misdirected Request\r\ncontent-type: text/plain\r\ncontent-length: 19\r\n` +
  `${STALE_HEADER}: ${STALE_HEADER_VALUE}\r\nconnection: close\r\n\r\nmisdirected request`;

export type UpgradeListener = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

export function createWebSocketHandler(workerIp: string, table: ActivationTable, actorSuffix: string): UpgradeListener {
  const hosts = new HostCache(actorSuffix);
  // ws (≈ 50 ms of CPU to load) is loaded at the first handshake, not at every stub's start: most runs make none.
  let wss: Promise<WebSocketServer> | undefined;
  return (req, socket, head) => {
    const key = hosts.key(req.headers.host);
    const activation = key === null ? undefined : table.get(key);
    if (activation === undefined) {
      table.misdirected++;
      socket.end(MISDIRECTED);
      return;
    }
    delete req.headers[TARGET_PORT_HEADER];
    delete req.headers[TARGET_ACTOR_HEADER];
    const rawId = req.headers['x-request-id'];
    // The upgraded socket has no error listener until ws adds its own: one meanwhile must not end the process.
    const destroy = (): void => void socket.destroy();
    socket.on('error', destroy);
    wss ??= import('ws').then(({ WebSocketServer }) => new WebSocketServer({ noServer: true, maxPayload: MAX_PAYLOAD, perMessageDeflate: false }));
    wss.then(
      (server) => {
        socket.off('error', destroy);
        server.handleUpgrade(req, socket, head, (ws) => {
          if (!activation.active) {
            ws.terminate();
            return;
          }
          activation.deliver(typeof rawId === 'string' ? rawId : undefined);
          echo(ws, activation, workerIp);
        });
      },
      destroy,
    );
  };
}

function echo(ws: WebSocket, activation: Activation, workerIp: string): void {
  activation.sockets.add(ws);
  ws.once('close', () => activation.sockets.delete(ws));
  ws.on('error', () => ws.terminate());
  let seq = 0;
  ws.on('message', (data, isBinary) => {
    const text = isBinary ? '' : data.toString();
    const flood = /^\{"flood":\s*(\d+)\}$/.exec(text);
    if (flood !== null) {
      sendFlood(ws, Math.min(Number(flood[1]), MAX_FLOOD));
      return;
    }
    seq++;
    ws.send(JSON.stringify({ atespace: activation.ref.atespace, actor: activation.ref.name, worker: workerIp, seq, data: text }));
  });
}

function sendFlood(ws: WebSocket, bytes: number): void {
  const chunk = Buffer.alloc(FLOOD_CHUNK, 0x78);
  let left = bytes;
  // `ws` calls back with no error (null or undefined) once a message left the buffer.
  const next = (err?: Error | null): void => {
    if (err != null || left <= 0 || ws.readyState !== ws.OPEN) return;
    const n = Math.min(left, FLOOD_CHUNK);
    left -= n;
    ws.send(n === FLOOD_CHUNK ? chunk : chunk.subarray(0, n), { binary: true }, next);
  };
  next();
}
