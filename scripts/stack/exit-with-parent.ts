/**
 * Preloaded (`node --import`) into every component that `npm start` launches. The launcher holds the write end
 * of each component's stdin; when the launcher goes away for any reason, even SIGKILL, that pipe closes and the
 * component shuts down exactly as on SIGTERM. So a stack never leaves orphans behind.
 */
const stdin = process.stdin;
if (!stdin.isTTY) {
  const leave = (): void => {
    process.kill(process.pid, 'SIGTERM');
  };
  stdin.once('end', leave);
  stdin.once('error', leave);
  stdin.on('data', () => {
    /* the launcher never writes; discard */
  });
  stdin.resume();
  // Watching stdin must not keep a component alive that would otherwise exit.
  (stdin as unknown as { unref?: () => void }).unref?.();
}
export {};
