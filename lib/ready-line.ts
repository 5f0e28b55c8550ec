/**
 * Reading a component's output from a parent process: split a stream into lines, and recognise the one "ready"
 * log line (`{"msg":"ready","addresses":{...}}`, see logReady in logger.ts) that carries the addresses it bound.
 * Used by the test helper, the `npm start` launcher and the benchmark's launcher.
 */

/** Calls `onLine` for every complete line of `stream` (and for a last unterminated one at its end). */
export function splitLines(stream: NodeJS.ReadableStream, onLine: (line: string) => void): void {
  let buf = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf('\n')) !== -1) {
      onLine(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
    }
  });
  stream.on('end', () => {
    if (buf.length > 0) onLine(buf);
    buf = '';
  });
}

/** The addresses map of a component's ready line, if `line` is that line; otherwise undefined. */
export function readyAddresses(line: string): Readonly<Record<string, string>> | undefined {
  if (!line.startsWith('{') || !line.includes('"ready"')) return undefined;
  try {
    const rec = JSON.parse(line) as { msg?: unknown; addresses?: unknown };
    if (rec.msg !== 'ready' || typeof rec.addresses !== 'object' || rec.addresses === null) return undefined;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(rec.addresses)) if (typeof v === 'string') out[k] = v;
    return Object.freeze(out);
  } catch {
    return undefined;
  }
}
