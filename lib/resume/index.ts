/** Shared resume logic: the control-plane client, per-actor flights with parking, and the HTTP error catalog. */
export * from './control-client.js';
export * from './backoff.js';
export * from './parking-lot.js';
export * from './outcome.js';
export * from './flight.js';
export * from './http-errors.js';
