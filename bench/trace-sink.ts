/**
 * `--tracing on`: where the proxy's and extproc's spans go during a benchmark — an OTLP/HTTP receiver in the bench
 * process (127.0.0.1) that answers every export at once and only counts what it got (span ids are counted in the
 * JSON text, never parsed), so the components pay the whole cost of tracing (spans, batching, JSON encoding,
 * export) and the receiver almost none of the shared CPU.
 */
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

const SPAN_ID = '"spanId":';

export class TraceSink {
  exports = 0;
  spans = 0;

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<TraceSink> {
    let sink: TraceSink | undefined;
    const server = http.createServer((req, res) => {
      let text = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (text += chunk));
      req.on('end', () => {
        if (sink !== undefined) {
          sink.exports++;
          for (let at = text.indexOf(SPAN_ID); at !== -1; at = text.indexOf(SPAN_ID, at + SPAN_ID.length)) sink.spans++;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    sink = new TraceSink(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return sink;
  }

  /** The environment that makes a component trace to this sink, sampling `ratio` of the requests. */
  env(ratio: number): NodeJS.ProcessEnv {
    return {
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_ENDPOINT: this.url,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: String(ratio),
    };
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
