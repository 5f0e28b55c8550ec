/**
 * What the server sent on each stream of a raw HTTP/2 connection (`raw-h2.ts` frames), read strictly: a stream's
 * answer is header blocks (interim 1xx statuses, one final status, optionally trailers) and DATA, ending with
 * END_STREAM, or a RST_STREAM at any point; the connection may instead end (GOAWAY, close). Statuses are read from
 * the HPACK block's first field, which the client made readable without a decoder state by announcing a header
 * table of size 0 (`SETTINGS_HEADER_TABLE_SIZE`): the server's blocks then use the static table and literals only.
 */
import { FLAG, FRAME, type Frame } from '../raw-h2.js';

export interface StreamAnswer {
  /** The statuses of its header blocks, in order (undefined: a block without `:status`, i.e. trailers). */
  readonly statuses: (number | undefined)[];
  dataBytes: number;
  ended: boolean;
  /** RST_STREAM's error code. */
  reset: number | undefined;
  /** What is wrong with what the server sent on it. */
  problem: string | undefined;
}

/** Static table indexes of `:status` (RFC 7541 Appendix A). */
const STATIC_STATUS: Readonly<Record<number, number>> = { 8: 200, 9: 204, 10: 206, 11: 304, 12: 400, 13: 404, 14: 500 };

/** An HPACK integer with an `n`-bit prefix at `at`. */
function hpackInt(buf: Buffer, at: number, n: number): { value: number; next: number } {
  const max = (1 << n) - 1;
  let value = (buf[at] as number) & max;
  let next = at + 1;
  if (value < max) return { value, next };
  let shift = 0;
  for (;;) {
    const b = buf[next++];
    if (b === undefined) throw new Error('truncated integer');
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if ((b & 0x80) === 0) return { value, next };
  }
}

/** Huffman-coded digits (the codes of '0'–'9', RFC 7541 Appendix B), EOS padding allowed. */
function huffmanDigits(bytes: Buffer): string {
  let bits = '';
  for (const b of bytes) bits += b.toString(2).padStart(8, '0');
  let out = '';
  let i = 0;
  while (i < bits.length) {
    if (/^1+$/.test(bits.slice(i)) && bits.length - i < 8) break; // padding
    const five = parseInt(bits.slice(i, i + 5), 2);
    if (bits.length - i >= 5 && five <= 2) {
      out += String(five);
      i += 5;
      continue;
    }
    const six = parseInt(bits.slice(i, i + 6), 2);
    if (bits.length - i < 6 || six < 0x19 || six > 0x1f) throw new Error('not a digit');
    out += String(six - 0x19 + 3);
    i += 6;
  }
  return out;
}

/** The `:status` the block starts with; undefined when its first field is something else (trailers). */
export function statusOf(block: Buffer): number | undefined {
  let at = 0;
  while (at < block.length && ((block[at] as number) & 0xe0) === 0x20) at = hpackInt(block, at, 5).next; // table size updates
  const first = block[at];
  if (first === undefined) throw new Error('empty header block');
  if ((first & 0x80) !== 0) {
    const { value } = hpackInt(block, at, 7);
    if (value >= 8 && value <= 14) return STATIC_STATUS[value];
    if (value > 61) throw new Error(`dynamic table index ${value} though its size is 0`);
    return undefined;
  }
  const prefix = (first & 0x40) !== 0 ? 6 : 4;
  const name = hpackInt(block, at, prefix);
  if (name.value !== 8) return undefined; // the first field is not :status
  const huffman = ((block[name.next] as number) & 0x80) !== 0;
  const length = hpackInt(block, name.next, 7);
  const raw = block.subarray(length.next, length.next + length.value);
  const text = huffman ? huffmanDigits(raw) : raw.toString('latin1');
  if (!/^\d{3}$/.test(text)) throw new Error(`:status ${JSON.stringify(text)}`);
  return Number(text);
}

/** Reads every stream's frames (server to client) into its answer. */
export function readStreams(frames: readonly Frame[]): Map<number, StreamAnswer> {
  const streams = new Map<number, StreamAnswer>();
  let block: { stream: number; parts: Buffer[]; end: boolean } | undefined;
  const of = (id: number): StreamAnswer => {
    let s = streams.get(id);
    if (s === undefined) streams.set(id, (s = { statuses: [], dataBytes: 0, ended: false, reset: undefined, problem: undefined }));
    return s;
  };
  const headerBlockDone = (s: StreamAnswer, parts: Buffer[], end: boolean): void => {
    try {
      const status = statusOf(Buffer.concat(parts));
      const finals = s.statuses.filter((x) => x !== undefined && x >= 200).length;
      if (status === undefined && finals === 0) s.problem ??= 'a header block without :status before the final status';
      if (status !== undefined && (status < 100 || status > 599)) s.problem ??= `:status ${status}`;
      if (status !== undefined && finals > 0) s.problem ??= `a second status ${status} after a final one`;
      if (status === undefined && !end) s.problem ??= 'trailers without END_STREAM';
      s.statuses.push(status);
    } catch (err) {
      s.problem ??= `header block: ${(err as Error).message}`;
    }
    if (end) s.ended = true;
  };
  for (const f of frames) {
    if (f.stream === 0) continue;
    const s = of(f.stream);
    if (block !== undefined && (f.type !== FRAME.CONTINUATION || f.stream !== block.stream)) s.problem ??= 'a frame inside a header block';
    if (f.type === FRAME.RST_STREAM) {
      s.reset = f.payload.readUInt32BE(0);
      continue;
    }
    if (s.ended && s.reset === undefined) s.problem ??= `frame type ${f.type} after END_STREAM`;
    if (f.type === FRAME.HEADERS || f.type === FRAME.CONTINUATION) {
      const payload = f.type === FRAME.HEADERS ? headersPayload(f) : f.payload;
      block ??= { stream: f.stream, parts: [], end: (f.flags & FLAG.END_STREAM) !== 0 };
      block.parts.push(payload);
      if ((f.flags & FLAG.END_HEADERS) !== 0) {
        headerBlockDone(s, block.parts, block.end);
        block = undefined;
      }
    } else if (f.type === FRAME.DATA) {
      if (!s.statuses.some((x) => x !== undefined && x >= 200)) s.problem ??= 'DATA before the final status';
      s.dataBytes += f.payload.length;
      if ((f.flags & FLAG.END_STREAM) !== 0) s.ended = true;
    }
  }
  return streams;
}

/** A HEADERS frame's block fragment, without padding and priority. */
function headersPayload(f: Frame): Buffer {
  let p = f.payload;
  let pad = 0;
  if ((f.flags & 0x8) !== 0) {
    pad = p[0] as number;
    p = p.subarray(1);
  }
  if ((f.flags & 0x20) !== 0) p = p.subarray(5);
  return p.subarray(0, p.length - pad);
}
