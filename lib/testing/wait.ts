/**
 * Test helpers: poll a condition with a deadline instead of sleeping for a guessed time. One argument order for
 * both: the check, then the deadline, then what is awaited (for the error message).
 */

/** Polls `check` every 10 ms until it returns a value other than undefined, and resolves with it; throws naming `what` after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 5000, what = 'a value'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Polls `check` every 10 ms until it returns true; throws naming `what` after `timeoutMs`. */
export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  await eventually(async () => ((await check()) ? true : undefined), timeoutMs, what);
}
