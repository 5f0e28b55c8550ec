import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readTracingConfig, type TracingOn } from './config.js';
import { UsageError } from '../flags.js';

const on = (env: NodeJS.ProcessEnv): TracingOn => {
  const c = readTracingConfig(env, 'actor-edge-test');
  assert.equal(c.enabled, true);
  return c as TracingOn;
};

test('off unless OTEL_TRACES_EXPORTER names otlp; OTEL_SDK_DISABLED wins', () => {
  assert.equal(readTracingConfig({}, 'x').enabled, false);
  assert.equal(readTracingConfig({ OTEL_TRACES_EXPORTER: 'none' }, 'x').enabled, false);
  assert.equal(readTracingConfig({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }, 'x').enabled, false);
  assert.throws(() => readTracingConfig({ OTEL_TRACES_EXPORTER: 'zipkin' }, 'x'), UsageError);
});

test('the defaults: localhost:4318, parent-based always on, the component service name, batches every 5 s', () => {
  const c = on({ OTEL_TRACES_EXPORTER: 'otlp' });
  assert.equal(c.endpoint, 'http://localhost:4318/v1/traces');
  assert.equal(c.sampler, 'parentbased_always_on');
  assert.equal(c.ratio, 1);
  assert.equal(c.serviceName, 'actor-edge-test');
  assert.deepEqual(c.batch, { scheduledDelayMs: 5000, maxQueueSize: 2048, maxExportBatchSize: 512, exportTimeoutMs: 30000 });
});

test('endpoints: the traces endpoint as given, else the base endpoint + /v1/traces', () => {
  assert.equal(on({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/' }).endpoint, 'http://127.0.0.1:9/v1/traces');
  assert.equal(on({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9/base' }).endpoint, 'http://127.0.0.1:9/base/v1/traces');
  assert.equal(
    on({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:1', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b:2/custom' }).endpoint,
    'https://b:2/custom',
  );
  assert.throws(() => on({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://a:1' }), /not an http\(s\) URL/);
});

test('only the JSON encoding is spoken: another protocol is a clear error', () => {
  assert.equal(on({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }).enabled, true);
  assert.throws(() => on({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }), /OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" is not supported/);
  assert.throws(() => on({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf' }), /TRACES_PROTOCOL/);
});

test('samplers and their ratio; a bad one is refused', () => {
  const r = on({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' });
  assert.equal(r.sampler, 'parentbased_traceidratio');
  assert.equal(r.ratio, 0.01);
  assert.equal(on({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'always_on', OTEL_TRACES_SAMPLER_ARG: '0.5' }).ratio, 1, 'the ratio only matters to the ratio samplers');
  assert.throws(() => on({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'sometimes' }), /OTEL_TRACES_SAMPLER/);
  assert.throws(() => on({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }), /from 0 to 1/);
});

test('service name, resource attributes, headers, timeouts and batch settings', () => {
  const c = on({
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-resource,deployment.environment=prod%20eu',
    OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20t,x-tenant=a',
    OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '2500',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
  assert.equal(c.serviceName, 'from-resource');
  assert.equal(c.resource['deployment.environment'], 'prod eu');
  assert.deepEqual(c.headers, { authorization: 'Bearer t', 'x-tenant': 'a' });
  assert.equal(c.exportTimeoutMs, 2500);
  assert.equal(c.batch.scheduledDelayMs, 100);
  assert.equal(on({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SERVICE_NAME: 'edge-eu', OTEL_RESOURCE_ATTRIBUTES: 'service.name=x' }).serviceName, 'edge-eu');
  assert.throws(() => on({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_RESOURCE_ATTRIBUTES: 'novalue' }), /not key=value/);
  assert.throws(() => on({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_BSP_SCHEDULE_DELAY: '-1' }), /positive integer/);
  assert.ok(Object.isFrozen(c) && Object.isFrozen(c.batch) && Object.isFrozen(c.headers));
});
