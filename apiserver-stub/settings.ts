/** Latencies and switches that the admin API may change at run time (PUT /config); seeded from the frozen Config. */
import { errors } from './errors.js';

export interface RuntimeSettings {
  resolveLatencyMs: number;
  /** Delay before the reads GetActor and GetActorEgressPolicy answer. */
  readLatencyMs: number;
  coldResumeMs: number;
  autoCreate: boolean;
}

const LIMITS = { resolveLatencyMs: 60_000, readLatencyMs: 60_000, coldResumeMs: 600_000 } as const;

/** Applies a PUT /config body (any subset of the settings); throws INVALID_ARGUMENT and changes nothing on bad input. */
export function applySettings(settings: RuntimeSettings, body: unknown): RuntimeSettings {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw errors.invalidArgument('expected a JSON object');
  const next = { ...settings };
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (name === 'resolveLatencyMs' || name === 'readLatencyMs' || name === 'coldResumeMs') {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > LIMITS[name]) {
        throw errors.invalidArgument(`${name}: expected a whole number of milliseconds from 0 to ${LIMITS[name]}`);
      }
      next[name] = value;
    } else if (name === 'autoCreate') {
      if (typeof value !== 'boolean') throw errors.invalidArgument('autoCreate: expected true or false');
      next.autoCreate = value;
    } else {
      throw errors.invalidArgument(`unknown setting "${name}" (known: resolveLatencyMs, readLatencyMs, coldResumeMs, autoCreate)`);
    }
  }
  Object.assign(settings, next);
  return settings;
}
