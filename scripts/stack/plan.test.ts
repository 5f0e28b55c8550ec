import { test } from 'node:test';
import assert from 'node:assert/strict';
import { STEPS, banner, dialable } from './plan.js';

const ready = {
  'apiserver-stub': { grpc: '0.0.0.0:50052', admin: '127.0.0.1:9903' },
  extproc: { grpc: '127.0.0.1:50051', admin: '127.0.0.1:9902' },
  proxy: { ingress: '127.0.0.1:8080', admin: '127.0.0.1:9901' },
};

test('components start in dependency order and are wired to the addresses their predecessors bound', () => {
  assert.deepEqual(
    STEPS.map((s) => s.name),
    ['apiserver-stub', 'extproc', 'proxy'],
  );
  const [stub, extproc, proxy] = STEPS;
  assert.deepEqual(stub?.args(ready), []);
  assert.deepEqual(extproc?.args(ready), ['--apiserver', '127.0.0.1:50052']);
  assert.deepEqual(proxy?.args(ready), ['--extproc', '127.0.0.1:50051'], 'the proxy is not handed the control plane: only the benchmark resolver reads it');
  assert.throws(() => proxy?.args({ 'apiserver-stub': ready['apiserver-stub'] }), /extproc reported no "grpc"/);
});

test('wildcard binds are dialled on loopback', () => {
  assert.equal(dialable('0.0.0.0:1'), '127.0.0.1:1');
  assert.equal(dialable('[::]:2'), '[::1]:2');
  assert.equal(dialable('127.0.0.5:3'), '127.0.0.5:3');
});

test('the banner shows the ingress URL and the curl example for the default atespace and suffix', () => {
  const b = banner(ready, {});
  assert.equal(b.ingress, 'http://127.0.0.1:8080');
  assert.equal(b.curl, "curl -H 'Host: actor-000.demo.actors.resources.substrate.ate.dev' http://127.0.0.1:8080/");
  assert.match(b.lines[0] ?? '', /actor cache: on/);
  assert.ok(b.lines.includes('  dashboard http://127.0.0.1:9901/dashboard'), 'the live dashboard');
  const off = banner(ready, { PROXY_ACTOR_CACHE: 'off', PROXY_ACTOR_SUFFIX: 'a.example', APISERVER_ATESPACE: 'team' });
  assert.equal(off.curl, "curl -H 'Host: actor-000.team.a.example' http://127.0.0.1:8080/");
  assert.match(off.lines[0] ?? '', /actor cache: off/);
  assert.ok(!b.lines.some((l) => l.includes('https')), 'no HTTPS line without the HTTPS listener');
  const tls = banner({ ...ready, proxy: { ...ready.proxy, tls: '0.0.0.0:8443' } }, {});
  assert.ok(tls.lines.includes('  https    https://127.0.0.1:8443/ (the HTTPS listener)'), tls.lines.join('\n'));
});

test('with OTEL_TRACES_EXPORTER=otlp the banner says where the spans go', () => {
  assert.ok(banner(ready, { OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/' }).lines.includes('  tracing  proxy and extproc spans to http://127.0.0.1:4318/v1/traces (OTLP/HTTP JSON)'));
  assert.ok(!banner(ready, {}).lines.some((l) => l.includes('tracing')));
});

test('the banner says whether the internal hops run mTLS', () => {
  assert.ok(banner(ready, { STACK_TLS: 'on' }).lines.some((l) => /mTLS +on every internal hop/.test(l)));
  assert.ok(banner(ready, { STACK_TLS: 'off' }).lines.some((l) => /mTLS +off: every internal hop is plaintext/.test(l)));
});

test('with an egress listener and the stub\'s destinations, the banner shows the listener and how to open a tunnel as actor-000', () => {
  assert.ok(!banner(ready, {}).lines.some((l) => l.includes('egress')), 'no egress line without the listener');
  const withEgress = {
    ...ready,
    'apiserver-stub': { ...ready['apiserver-stub'], 'destination-1': '127.0.0.2:9701' },
    proxy: { ...ready.proxy, egress: '127.0.0.1:9443' },
  };
  const lines = banner(withEgress, { STACK_CA_FILE: '/certs/ca.pem' }).lines;
  assert.ok(lines.includes("  egress   https://127.0.0.1:9443 (actors' CONNECT IP:port, each with its actor certificate)"), lines.join('\n'));
  assert.ok(lines.includes("  try      curl -s -X POST 'http://127.0.0.1:9903/actors/demo/actor-000/certificate?format=pem' -o actor-000.pem"), lines.join('\n'));
  assert.ok(lines.includes('           curl -p -x https://127.0.0.1:9443 --proxy-cacert /certs/ca.pem --proxy-cert actor-000.pem --proxy-key actor-000.pem http://127.0.0.2:9701/'), lines.join('\n'));
  assert.ok(banner(withEgress, {}).lines.some((l) => l.includes('--proxy-insecure')), 'no CA file: curl is told not to verify');
});
