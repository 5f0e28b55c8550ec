/**
 * The little DER (ASN.1 distinguished encoding) that building an X.509 certificate in-process takes: writing an
 * element (definite lengths up to 64 KiB), the few universal types a certificate uses, and reading the elements
 * of a constructed one (to take a CA certificate's subject as the issuer of what it signs).
 */

/** One DER element: tag, definite length, contents. */
export function der(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  const n = body.length;
  if (n > 0xffff) throw new Error('DER element too long');
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
}

export const sequence = (...items: Buffer[]): Buffer => der(0x30, ...items);
export const set = (...items: Buffer[]): Buffer => der(0x31, ...items);
export const octetString = (contents: Buffer): Buffer => der(0x04, contents);
export const utf8String = (text: string): Buffer => der(0x0c, Buffer.from(text, 'utf8'));
export const BOOLEAN_TRUE: Buffer = Buffer.from([0x01, 0x01, 0xff]);
export const NULL: Buffer = Buffer.from([0x05, 0x00]);

/** A BIT STRING of whole bytes (no unused bits). */
export const bitString = (contents: Buffer): Buffer => der(0x03, Buffer.from([0]), contents);

/** A non-negative INTEGER from its big-endian magnitude, in its shortest form (a 0x00 only before a high bit). */
export function unsignedInteger(magnitude: Buffer): Buffer {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const bytes = magnitude.subarray(start);
  const body = bytes.length === 0 ? Buffer.from([0]) : ((bytes[0] as number) & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes;
  return der(0x02, body);
}

/** An OBJECT IDENTIFIER from its dotted form (arcs below 2^32). */
export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  if (arcs.length < 2 || arcs.some((a) => !Number.isInteger(a) || a < 0 || a > 0xffffffff)) throw new Error(`"${dotted}" is not an object identifier`);
  const [first = 0, second = 0, ...rest] = arcs;
  const bytes: number[] = [];
  for (const arc of [first * 40 + second, ...rest]) {
    const chunk = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
}

/** Where one element lies in a buffer: its tag, where it starts, where its contents start, where it ends. */
export interface DerSpan {
  readonly tag: number;
  readonly start: number;
  readonly contentStart: number;
  readonly end: number;
}

/** The element at `at` (single-byte tags, definite lengths); throws on anything truncated or indefinite. */
export function readElement(buf: Buffer, at = 0, limit = buf.length): DerSpan {
  const tag = buf[at];
  const first = buf[at + 1];
  if (tag === undefined || first === undefined || at + 2 > limit) throw new Error('DER: truncated element');
  if ((tag & 0x1f) === 0x1f) throw new Error('DER: multi-byte tags are not supported');
  let length = first;
  let contentStart = at + 2;
  if (first & 0x80) {
    const count = first & 0x7f;
    if (count === 0 || count > 3) throw new Error('DER: unsupported length');
    length = 0;
    for (let i = 0; i < count; i++) {
      const b = buf[contentStart + i];
      if (b === undefined) throw new Error('DER: truncated length');
      length = length * 256 + b;
    }
    contentStart += count;
  }
  const end = contentStart + length;
  if (end > limit) throw new Error('DER: element runs past its container');
  return { tag, start: at, contentStart, end };
}

/** The elements inside constructed element `parent`, in order. */
export function childrenOf(buf: Buffer, parent: DerSpan): DerSpan[] {
  const out: DerSpan[] = [];
  for (let at = parent.contentStart; at < parent.end; ) {
    const child = readElement(buf, at, parent.end);
    out.push(child);
    at = child.end;
  }
  return out;
}

/** An X.509 certificate's subject Name, as its DER bytes (what a certificate it signs carries as its issuer). */
export function certificateSubject(certificateDer: Buffer): Buffer {
  const certificate = readElement(certificateDer);
  const tbs = certificate.tag === 0x30 ? childrenOf(certificateDer, certificate)[0] : undefined;
  if (tbs === undefined || tbs.tag !== 0x30) throw new Error('DER: not a certificate');
  const fields = childrenOf(certificateDer, tbs);
  // [0] version (optional), serialNumber, signature, issuer, validity, subject
  const subject = fields[(fields[0]?.tag === 0xa0 ? 1 : 0) + 4];
  if (subject === undefined || subject.tag !== 0x30) throw new Error('DER: a certificate without a subject');
  return certificateDer.subarray(subject.start, subject.end);
}
