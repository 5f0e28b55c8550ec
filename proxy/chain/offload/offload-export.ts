/**
 * A filter module's `offload` export, found the same way on the main thread (when the module is loaded as a filter)
 * and in a worker thread (when a task names the module): a named export of an ES module, or a property of a
 * CommonJS module's `module.exports` / TypeScript's compiled `exports.offload`.
 */
import type { OffloadFunction } from '../../api/offload.js';

/** The module's `offload` function, undefined when it has none; a TypeError when it is not a function. */
export function offloadExportOf(mod: Readonly<Record<string, unknown>>): OffloadFunction | undefined {
  let fn = mod.offload;
  if (fn === undefined) {
    const def = mod.default as Record<string, unknown> | null | undefined;
    if (def !== null && (typeof def === 'object' || typeof def === 'function')) fn = def.offload;
  }
  if (fn === undefined) return undefined;
  if (typeof fn !== 'function') throw new TypeError('its "offload" export must be a function');
  return fn as OffloadFunction;
}
