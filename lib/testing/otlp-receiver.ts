/**
 * A small OTLP/HTTP traces receiver for tests: `POST /v1/traces` with the JSON encoding (what the components'
 * exporter sends), answered 200 `{}`; every span kept flattened, with its service and its attributes as plain
 * values. Listens on 127.0.0.1 only.
 */
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { waitFor } from './wait.js';

export interface ReceivedSpan {
  readonly service: string;
  readonly traceId: string;
  readonly spanId: string;
  /** '' for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP's SpanKind number: 1 internal, 2 server, 3 client. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, unknown>>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  readonly status: number;
  readonly startNs: bigint;
  readonly endNs: bigint;
  readonly events: readonly string[];
}

interface AnyValue {
  readonly stringValue?: string;
  readonly intValue?: string | number;
  readonly doubleValue?: number;
  readonly boolValue?: boolean;
  readonly arrayValue?: { readonly values?: readonly AnyValue[] };
}

interface KeyValue {
  readonly key: string;
  readonly value: AnyValue;
}

function plain(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(plain);
  return undefined;
}

function attributes(list: readonly KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));
}

interface ExportRequest {
  readonly resourceSpans?: readonly {
    readonly resource?: { readonly attributes?: readonly KeyValue[] };
    readonly scopeSpans?: readonly {
      readonly spans?: readonly {
        readonly traceId: string;
        readonly spanId: string;
        readonly parentSpanId?: string;
        readonly name: string;
        readonly kind: number;
        readonly attributes?: readonly KeyValue[];
        readonly status?: { readonly code?: number };
        readonly startTimeUnixNano: string | number;
        readonly endTimeUnixNano: string | number;
        readonly events?: readonly { readonly name: string }[];
      }[];
    }[];
  }[];
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Export requests received (any path), and the content types they came with. */
  readonly requests: { readonly path: string; readonly contentType: string }[] = [];

  private constructor(
    private readonly server: http.Server,
    /** The base URL (`OTEL_EXPORTER_OTLP_ENDPOINT`). */
    readonly url: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    let receiver: OtlpReceiver | undefined;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        receiver?.receive(req.url ?? '', String(req.headers['content-type'] ?? ''), Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    receiver = new OtlpReceiver(server, `http://127.0.0.1:${port}`);
    return receiver;
  }

  /** The environment that points a component's tracing here (batches exported every 100 ms). */
  env(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
    return { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: this.url, OTEL_BSP_SCHEDULE_DELAY: '100', ...extra };
  }

  private receive(path: string, contentType: string, body: string): void {
    this.requests.push({ path, contentType });
    if (path !== '/v1/traces' || !contentType.startsWith('application/json')) return;
    const doc = JSON.parse(body) as ExportRequest;
    for (const rs of doc.resourceSpans ?? []) {
      const service = String(attributes(rs.resource?.attributes)['service.name'] ?? '');
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            service,
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            kind: s.kind,
            attributes: attributes(s.attributes),
            status: s.status?.code ?? 0,
            startNs: BigInt(s.startTimeUnixNano),
            endNs: BigInt(s.endTimeUnixNano),
            events: (s.events ?? []).map((e) => e.name),
          });
        }
      }
    }
  }

  /** The spans of one trace so far. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  /** Waits until `check` holds for the spans of `traceId` and returns them. */
  async waitForTrace(traceId: string, check: (spans: ReceivedSpan[]) => boolean, what: string, timeoutMs = 10_000): Promise<ReceivedSpan[]> {
    await waitFor(() => check(this.trace(traceId)), timeoutMs, what);
    return this.trace(traceId);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * A trace as an indented outline, one span a line (`service name`), children under their parent in start order:
 * what a test compares with the exact tree it expects.
 */
export function outline(spans: readonly ReceivedSpan[], label: (s: ReceivedSpan) => string = (s) => `${s.service} ${s.name}`): string[] {
  const ids = new Set(spans.map((s) => s.spanId));
  const children = (parent: string): ReceivedSpan[] =>
    spans.filter((s) => (parent === '' ? !ids.has(s.parentSpanId) : s.parentSpanId === parent)).sort((a, b) => (a.startNs < b.startNs ? -1 : a.startNs > b.startNs ? 1 : 0));
  const lines: string[] = [];
  const walk = (parent: string, depth: number): void => {
    for (const s of children(parent)) {
      lines.push(`${'  '.repeat(depth)}${label(s)}`);
      walk(s.spanId, depth + 1);
    }
  };
  walk('', 0);
  return lines;
}
