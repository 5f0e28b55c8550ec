/**
 * The wait of a drain: resolves true when the owner reports that what it holds became empty within `timeoutMs`,
 * false at the timeout. The owner keeps the callback `register` hands it (undefined again once the wait is over) and
 * calls it when its last item goes.
 */
export function untilEmpty(timeoutMs: number, register: (onEmpty: (() => void) | undefined) => void): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => {
      register(undefined);
      resolve(false);
    }, timeoutMs);
    register(() => {
      clearTimeout(timer);
      register(undefined);
      resolve(true);
    });
  });
}
