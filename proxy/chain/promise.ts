/** The chain's one promise test: callbacks stay synchronous unless a filter returned a promise. */
export function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}
