/**
 * Rotates the HTTPS listener's certificate without a restart: the directories holding `--tls-cert` and
 * `--tls-key` are watched (a file replaced by a rename, or a mounted secret whose symlink is swapped, changes its
 * directory, not the old file), and after any change the pair is read again. New bytes that form a usable pair
 * are installed for new handshakes (`setSecureContext`; open connections keep theirs); a pair that does not is
 * logged as an error and the certificate in use stays. A change half-written (certificate new, key old) is
 * refused the same way and picked up with the next change.
 */
import { watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { loadCertificate, sameCertificate, type LoadedCertificate, type TlsFiles } from './tls-certificate.js';

/** Changes often come in bursts (write, then chmod, then rename): read once the burst is over. */
const SETTLE_MS = 50;

export class CertificateWatch {
  readonly #watchers: FSWatcher[] = [];
  #timer: NodeJS.Timeout | undefined;
  #current: LoadedCertificate;
  /** Reloads that installed a new certificate, and reloads refused. */
  reloads = 0;
  failures = 0;

  constructor(
    private readonly files: TlsFiles,
    initial: LoadedCertificate,
    private readonly install: (loaded: LoadedCertificate) => void,
    private readonly log: Logger,
  ) {
    this.#current = initial;
    const dirs = new Set([path.dirname(path.resolve(files.certFile)), path.dirname(path.resolve(files.keyFile))]);
    for (const dir of dirs) {
      const watcher = watch(dir, { persistent: false }, () => this.#changed());
      watcher.on('error', (err) => log.error({ err, dir }, 'tls certificate watch failed'));
      this.#watchers.push(watcher);
    }
  }

  #changed(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.reload(), SETTLE_MS);
    this.#timer.unref();
  }

  /** Reads the files again and installs them when they changed and are usable. */
  reload(): void {
    this.#timer = undefined;
    let loaded: LoadedCertificate;
    try {
      loaded = loadCertificate(this.files);
    } catch (err) {
      this.failures++;
      this.log.error({ err: (err as Error).message }, 'tls certificate reload failed: the certificate in use stays');
      return;
    }
    if (sameCertificate(this.#current, loaded)) return;
    this.install(loaded);
    this.#current = loaded;
    this.reloads++;
    this.log.info({ cert: this.files.certFile }, 'tls certificate reloaded');
  }

  close(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    for (const w of this.#watchers) w.close();
  }
}
