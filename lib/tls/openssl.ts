/** Runs the system's `openssl` command: the one tool every development certificate here is made with. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Runs `openssl ...args`; throws naming the subcommand and openssl's own message (or that it is not installed). */
export async function openssl(args: readonly string[]): Promise<void> {
  try {
    await run('openssl', [...args], { maxBuffer: 1 << 20 });
  } catch (err) {
    const e = err as { code?: string; stderr?: string; message: string };
    if (e.code === 'ENOENT') throw new Error('the "openssl" command is not installed (it writes the development certificates)');
    throw new Error(`openssl ${args[0]} failed: ${(e.stderr ?? e.message).trim()}`);
  }
}
