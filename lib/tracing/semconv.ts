/**
 * The OpenTelemetry semantic conventions' attribute names the components' spans use, as plain strings: the
 * `@opentelemetry/semantic-conventions` package exports thousands of names and takes about 50 ms of CPU to load, on
 * every start of every process, for the dozen read here. `semconv.test.ts` checks each against the package's own
 * export, and `scripts/check-imports.mjs` keeps the package out of everything but the tracing SDK's provider.
 */
export const ATTR_CLIENT_ADDRESS = 'client.address';
export const ATTR_HTTP_REQUEST_METHOD = 'http.request.method';
export const ATTR_HTTP_REQUEST_RESEND_COUNT = 'http.request.resend_count';
export const ATTR_HTTP_RESPONSE_STATUS_CODE = 'http.response.status_code';
export const ATTR_NETWORK_PEER_ADDRESS = 'network.peer.address';
export const ATTR_NETWORK_PROTOCOL_VERSION = 'network.protocol.version';
export const ATTR_RPC_METHOD = 'rpc.method';
export const ATTR_RPC_SYSTEM_NAME = 'rpc.system.name';
export const ATTR_SERVER_ADDRESS = 'server.address';
export const ATTR_SERVER_PORT = 'server.port';
export const ATTR_URL_PATH = 'url.path';
export const ATTR_URL_SCHEME = 'url.scheme';
export const ATTR_USER_AGENT_ORIGINAL = 'user_agent.original';
