/**
 * What ext_proc does for one request, as Envoy merges `ExtProcPerRoute` into the filter config: the most specific
 * (longest) matching host suffix wins; `disabled` means no stream at all (Envoy sets both header modes to SKIP);
 * `overrides` replace the processing mode fields and `failure_mode_allow` they name.
 */
import type { ExtProcSettings, ProcessingMode } from './settings.js';

export interface RequestPlan {
  readonly mode: ProcessingMode;
  readonly failureModeAllow: boolean;
}

/** `host` without its port, lower case. */
function hostOf(authority: string): string {
  const h = authority.startsWith('[') ? authority.slice(0, authority.indexOf(']') + 1) : authority.split(':')[0] ?? '';
  return h.toLowerCase().replace(/\.$/, '');
}

/** The plan for a request to `authority`; undefined when ext_proc is disabled for it. */
export function planFor(authority: string, settings: ExtProcSettings): RequestPlan | undefined {
  const base: RequestPlan = { mode: settings.processingMode, failureModeAllow: settings.failureModeAllow };
  if (settings.perHost.length === 0) return base;
  const host = hostOf(authority);
  for (const { suffix, override } of settings.perHost) {
    if (host !== suffix && !host.endsWith(`.${suffix}`)) continue;
    if (override.kind === 'disabled') return undefined;
    return {
      mode: { ...settings.processingMode, ...override.processingMode },
      failureModeAllow: override.failureModeAllow ?? settings.failureModeAllow,
    };
  }
  return base;
}
