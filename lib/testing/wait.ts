/** Test helpers: poll a condition with a deadline instead of sleeping for a guessed time. */

/** Polls `check` every 20 ms until it returns a value other than undefined; throws naming `what` after `timeoutMs`. */
export async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Polls `check` every 20 ms until it returns true; throws naming `what` after `timeoutMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  await until(what, async () => ((await check()) ? true : undefined), timeoutMs);
}
