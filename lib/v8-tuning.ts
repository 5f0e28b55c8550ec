/**
 * V8 flags a component sets for itself before it serves, and what `GET /server_info` reports of them.
 *
 * The proxy turns off allocation-site pretenuring (`--no-allocation-site-pretenuring`). With it on, V8 learns to
 * allocate some per-request objects directly in the old generation (a few requests are still running at each
 * young-generation collection, so their allocation sites look long-lived). Those objects die as soon as their
 * request ends, but until the next full collection they still point at the younger objects of the same request,
 * and the young-generation collector treats every old-to-young pointer as live: each request's context, headers,
 * node's request and undici's request were copied and promoted instead of freed. Measured on the benchmark's hit
 * path (docs/design/proxy.md, "The hit path and the garbage collector"): with it off, 2–3x fewer bytes per request survive a
 * young-generation collection and the proxy's peak RSS falls by about a third; the CPU saved is a few percent,
 * within the noise of single runs. Objects that do live long (connections, bindings, pools) are still promoted,
 * after surviving two young collections as V8 always does.
 */
import v8 from 'node:v8';

const applied: string[] = [];

/** Sets `flags` (each `--name` or `--no-name`) for this process; call it before the component serves. */
export function applyV8Flags(flags: readonly string[]): void {
  for (const flag of flags) {
    if (applied.includes(flag)) continue;
    v8.setFlagsFromString(flag);
    applied.push(flag);
  }
}

/** The flags this process set for itself (`GET /server_info`'s `v8Flags`). */
export function appliedV8Flags(): readonly string[] {
  return [...applied];
}

/** The proxy's V8 flags. */
export const PROXY_V8_FLAGS: readonly string[] = Object.freeze(['--no-allocation-site-pretenuring']);
