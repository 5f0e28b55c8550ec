/** ext-proc settings from flags: Envoy's defaults, and start-up refusal of whatever the proxy cannot honour. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UsageError } from '../../../lib/flags.js';
import { readProxyConfig } from '../../config.js';

const settings = (...argv: string[]) => {
  const { config } = readProxyConfig(argv, {});
  if (config === undefined) throw new Error('no config');
  return config.extProc.settings;
};

test('defaults: request headers SEND, response headers SKIP (this deployment routes only), body NONE; original_dst always received', () => {
  const s = settings();
  assert.deepEqual(s.processingMode, { requestHeaderMode: 'SEND', responseHeaderMode: 'SKIP', requestBodyMode: 'NONE' });
  assert.equal(s.failureModeAllow, false);
  assert.equal(s.maxMessageTimeoutMs, 0);
  assert.deepEqual(s.receivingNamespaces, ['envoy.filters.listener.original_dst']);
  assert.equal(settings('--extproc-response-headers', 'send').processingMode.responseHeaderMode, 'SEND');
  assert.equal(settings('--extproc-processing-mode', 'response_header_mode=SEND').processingMode.responseHeaderMode, 'SEND');
});

test('settings the proxy cannot honour are refused at start-up with the setting named', () => {
  const refused: [string[], RegExp][] = [
    [['--extproc-processing-mode', 'request_body_mode=STREAMED'], /request_body_mode STREAMED is not supported/],
    [['--extproc-processing-mode', 'request_body_mode=FULL_DUPLEX_STREAMED'], /not supported/],
    [['--extproc-processing-mode', 'request_body_mode=GRPC'], /not supported/],
    [['--extproc-processing-mode', 'response_body_mode=BUFFERED'], /response_body_mode BUFFERED is not supported/],
    [['--extproc-processing-mode', 'request_trailer_mode=SEND'], /request_trailer_mode SEND is not supported/],
    [['--extproc-processing-mode', 'bogus=1'], /unknown processing_mode field "bogus"/],
    [['--extproc-processing-mode', 'request_header_mode'], /expected FIELD=VALUE/],
    [['--extproc-request-attributes', 'request.size'], /"request.size" is not supported/],
    [['--extproc-request-attributes', 'connection.tls_version'], /not supported/],
    [['--extproc-mutation-rules', 'disallow_all'], /unknown rule "disallow_all"/],
    [['--extproc-mutation-allow-expression', '(['], /invalid regex/],
    [['--extproc-forward-allowed-headers', 'bad header'], /not a header name/],
    [['--extproc-per-host', 'a.example=disabled,a.example=failure_mode_allow:true'], /both disabled and overridden/],
    [['--extproc-per-host', 'a.example=request_body_mode:STREAMED'], /not supported/],
    [['--extproc-message-timeout-ms', '5000', '--extproc-max-message-timeout-ms', '100'], /max-message-timeout-ms must be 0 or at least/],
  ];
  for (const [argv, message] of refused) {
    assert.throws(() => settings(...argv), (err: unknown) => err instanceof UsageError && message.test(err.message), argv.join(' '));
  }
});
