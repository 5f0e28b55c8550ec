/**
 * gRPC's message framing over HTTP/2 (gRPC's PROTOCOL-HTTP2): each message is a 1-byte compressed flag, a 4-byte
 * big-endian length and the message bytes. The demo service sends uncompressed messages only and refuses
 * compressed ones.
 */

export const GRPC_HEADER_BYTES = 5;

export type Frames = { readonly kind: 'ok'; readonly messages: Buffer[] } | { readonly kind: 'bad'; readonly reason: string };

/** Splits a whole request body into its messages. */
export function readFrames(body: Buffer): Frames {
  const messages: Buffer[] = [];
  let at = 0;
  while (at < body.length) {
    if (body.length - at < GRPC_HEADER_BYTES) return { kind: 'bad', reason: 'truncated message header' };
    if (body[at] !== 0) return { kind: 'bad', reason: 'compressed messages are not supported' };
    const length = body.readUInt32BE(at + 1);
    const end = at + GRPC_HEADER_BYTES + length;
    if (end > body.length) return { kind: 'bad', reason: 'truncated message' };
    messages.push(body.subarray(at + GRPC_HEADER_BYTES, end));
    at = end;
  }
  return { kind: 'ok', messages };
}

/** One message, framed. */
export function frame(message: Buffer): Buffer {
  const out = Buffer.allocUnsafe(GRPC_HEADER_BYTES + message.length);
  out[0] = 0;
  out.writeUInt32BE(message.length, 1);
  message.copy(out, GRPC_HEADER_BYTES);
  return out;
}
