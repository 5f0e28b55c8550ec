/**
 * Envoy's `metadata_options` for one request: each top-level key of a processor's `dynamic_metadata` is a
 * namespace, kept only when it is a receiving namespace (`envoy.filters.listener.original_dst`, the route, always
 * is); kept namespaces that are also forwarding namespaces go back to the processor in `metadata_context` on the
 * stream's later messages. Typed metadata is not supported.
 */
import type { ProcessingResponse, StructMessage } from './messages.js';
import { ORIGINAL_DST_LOCAL_KEY, ORIGINAL_DST_NAMESPACE } from '../../../lib/wire-contract.js';

/** The namespace Envoy's ORIGINAL_DST cluster reads (`local`: the address to connect to). */
export { ORIGINAL_DST_LOCAL_KEY, ORIGINAL_DST_NAMESPACE };

/** The request's dynamic metadata, by namespace. */
export type RequestMetadata = Map<string, StructMessage>;

/** Stores the receiving namespaces of `metadata` (a later answer's namespace replaces an earlier one's); returns how many were dropped. */
export function receiveMetadata(
  store: RequestMetadata,
  metadata: ProcessingResponse['dynamic_metadata'],
  receiving: readonly string[],
): number {
  let dropped = 0;
  for (const [ns, value] of Object.entries(metadata?.fields ?? {})) {
    const struct = value.structValue;
    if (!receiving.includes(ns) || struct == null || (value.kind !== undefined && value.kind !== 'structValue')) {
      dropped++;
      continue;
    }
    store.set(ns, struct);
  }
  return dropped;
}

/** The `metadata_context` Envoy sends: the forwarding namespaces the request has (always set, often empty). */
export function forwardedMetadata(store: RequestMetadata | undefined, forwarding: readonly string[]): { filter_metadata: Record<string, StructMessage> } {
  const filter_metadata: Record<string, StructMessage> = {};
  if (store !== undefined) {
    for (const ns of forwarding) {
      const struct = store.get(ns);
      if (struct !== undefined) filter_metadata[ns] = struct;
    }
  }
  return { filter_metadata };
}

/** The `original_dst` address in one answer's dynamic metadata (`envoy.filters.listener.original_dst` / `local`). */
export function originalDstOf(msg: ProcessingResponse): string | undefined {
  const store: RequestMetadata = new Map();
  receiveMetadata(store, msg.dynamic_metadata, [ORIGINAL_DST_NAMESPACE]);
  return metadataString(store, ORIGINAL_DST_NAMESPACE, ORIGINAL_DST_LOCAL_KEY);
}

/** The string at `namespace`.`key` of the request's metadata, if it is a string. */
export function metadataString(store: RequestMetadata | undefined, namespace: string, key: string): string | undefined {
  const v = store?.get(namespace)?.fields?.[key];
  return typeof v?.stringValue === 'string' && (v.kind === undefined || v.kind === 'stringValue') ? v.stringValue : undefined;
}
