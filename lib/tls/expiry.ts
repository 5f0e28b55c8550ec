/**
 * Certificates that announce their expiry: every certificate a component loads (credential bundles, trust bundles,
 * serving certificates) is read from its file again every minute, and the component exports the seconds until the
 * first of them expires (Envoy's `server.days_until_first_cert_expiring`, in seconds; negative once one has
 * expired) and logs a warning — at start, then at most once an hour — while that falls under the threshold
 * (`--cert-expiry-warning-hours`, 0: never). Reading the files rather than asking each TLS consumer keeps this
 * independent of how and when they reload: the files are what the next rotation loads.
 */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { NumberFlag } from '../flags.js';
import { metricPrefix, scrapedGauge } from '../prom-metrics.js';
import { pemBlocks } from './pem.js';

/** One file of certificates and what configured it (a flag), for the warning. */
export interface CertificateSource {
  readonly what: string;
  readonly file: string;
}

/** One certificate as the warning reports it. */
export interface LoadedCertificate {
  readonly what: string;
  readonly file: string;
  readonly subject: string;
  readonly notAfterMs: number;
}

export interface CertificateExpiryOptions {
  /** Warn while the first expiry is closer than this many hours (0: never warn). */
  readonly warningHours: number;
  readonly log: Logger;
  /** How often the files are read again (ms; default one minute). */
  readonly refreshMs?: number;
  /** The clock (tests). */
  readonly now?: () => number;
}

/** The default of every component's `--cert-expiry-warning-hours`: a week. */
export const CERT_EXPIRY_WARNING_HOURS = 168;

/**
 * Every component's `--cert-expiry-warning-hours`, declared once: `env` its variable, `loads` which certificates
 * the component loads (for the help), `section` where it sits in the component's config file.
 */
export function certExpiryWarningFlag(env: string, loads: string, section?: string): NumberFlag {
  return {
    type: 'number',
    env,
    default: CERT_EXPIRY_WARNING_HOURS,
    min: 0,
    ...(section === undefined ? {} : { section }),
    help: `Log a warning while a certificate ${loads} expires within this many hours (0: never).`,
  };
}

const REFRESH_MS = 60_000;
const WARN_EVERY_MS = 3_600_000;

/** The certificates in `sources`' files (a file that cannot be read or parsed contributes none). */
export function readCertificates(sources: readonly CertificateSource[]): LoadedCertificate[] {
  const out: LoadedCertificate[] = [];
  for (const source of sources) {
    let text: string;
    try {
      text = readFileSync(source.file, 'utf8');
    } catch {
      continue; // the component that loads the file reports it
    }
    for (const block of pemBlocks(text)) {
      if (block.label !== 'CERTIFICATE') continue;
      try {
        const cert = new X509Certificate(block.text);
        out.push({ what: source.what, file: source.file, subject: cert.subject.replace(/\n/g, ', '), notAfterMs: Date.parse(cert.validTo) });
      } catch {
        // a damaged block: the component's own loader refuses it
      }
    }
  }
  return out;
}

export class CertificateExpiry {
  #certificates: LoadedCertificate[] = [];
  #lastWarnAt = -Infinity;
  readonly #timer: NodeJS.Timeout | undefined;
  readonly #now: () => number;

  constructor(
    readonly sources: readonly CertificateSource[],
    private readonly opts: CertificateExpiryOptions,
  ) {
    this.#now = opts.now ?? Date.now;
    this.check();
    if (sources.length > 0) {
      this.#timer = setInterval(() => this.check(), opts.refreshMs ?? REFRESH_MS);
      this.#timer.unref();
    }
  }

  /** Seconds until the first certificate expires (negative: expired); undefined when there is none. */
  secondsUntilFirstExpiry(): number | undefined {
    if (this.#certificates.length === 0) return undefined;
    const first = Math.min(...this.#certificates.map((c) => c.notAfterMs));
    return Math.floor((first - this.#now()) / 1000);
  }

  /** Reads the files again and warns (at most once an hour) about every certificate under the threshold. */
  check(): void {
    this.#certificates = readCertificates(this.sources);
    const { warningHours, log } = this.opts;
    if (warningHours <= 0) return;
    const now = this.#now();
    const soon = this.#certificates.filter((c) => c.notAfterMs - now < warningHours * 3_600_000);
    if (soon.length === 0) {
      this.#lastWarnAt = -Infinity; // a rotation fixed it: warn again at once if it comes back
      return;
    }
    if (now - this.#lastWarnAt < WARN_EVERY_MS) return;
    this.#lastWarnAt = now;
    for (const c of soon.sort((a, b) => a.notAfterMs - b.notAfterMs)) {
      const hoursLeft = Math.round(((c.notAfterMs - now) / 3_600_000) * 10) / 10;
      log.warn(
        { flag: c.what, file: c.file, subject: c.subject, notAfter: new Date(c.notAfterMs).toISOString(), hoursLeft, warningHours },
        hoursLeft <= 0 ? 'a certificate has expired' : 'a certificate expires soon',
      );
    }
  }

  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
  }
}

/** Watches the configured `sources` (empty paths are left out). */
export function watchCertificates(sources: readonly CertificateSource[], opts: CertificateExpiryOptions): CertificateExpiry {
  return new CertificateExpiry(
    sources.filter((s) => s.file !== ''),
    opts,
  );
}

/**
 * Registers `actor_edge_<component>_tls_certificate_expiry_seconds` in `registry` when `expiry` watches any file
 * (`component` as the CLI names it: `proxy`, `extproc`, `apiserver-stub`). Several processes of one component
 * (the proxy's `--workers`) aggregate it by its minimum.
 */
export function registerCertificateExpiry(registry: Registry, component: string, expiry: CertificateExpiry): void {
  if (expiry.sources.length === 0) return;
  scrapedGauge(registry, {
    name: `${metricPrefix(component)}tls_certificate_expiry_seconds`,
    help: 'Seconds until the first of the certificates this component loads expires (negative: one has expired).',
    read: () => expiry.secondsUntilFirstExpiry() ?? 0,
    aggregator: 'min',
  });
}

/** `watchCertificates`, and the gauge registered in `opts.registry`. */
export function startCertificateExpiry(
  component: string,
  sources: readonly CertificateSource[],
  opts: CertificateExpiryOptions & { readonly registry: Registry },
): CertificateExpiry {
  const expiry = watchCertificates(sources, opts);
  registerCertificateExpiry(opts.registry, component, expiry);
  return expiry;
}
