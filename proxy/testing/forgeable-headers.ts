/**
 * The request headers a client could forge to steer routing, written out for the tests rather than read from the
 * proxy's own list (INTERNAL_HEADERS in lib/wire-contract.ts): a name dropped there must fail the tests, not
 * shrink what they expect.
 */
export const FORGEABLE_HEADERS: readonly string[] = [
  'ate-endpoint-cached',
  'x-ate-target-port',
  'ate-target-actor',
  'x-ate-original-host',
  'x-ate-original-dst',
  'x-ate-assignment-stale',
  'x-envoy-original-dst-host',
];
