/**
 * Certificates that announce their expiry: the seconds until the first certificate of the watched files expires
 * (chains and trust bundles included), the warning under the threshold (once an hour at most, never at 0), and the
 * gauge, which several processes of one component merge by its minimum.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { X509Certificate } from 'node:crypto';
import { pino } from 'pino';
import { AggregatorRegistry, Registry } from 'prom-client';
import { pemBlocks } from './pem.js';
import { readFileSync } from 'node:fs';
import { CERT_EXPIRY_WARNING_HOURS, certExpiryWarningFlag, readCertificates, registerCertificateExpiry, watchCertificates } from './expiry.js';
import { testPki, type TestPki } from './testing/pki.js';

let pki: TestPki;
describe('expiry', () => {
  before(async () => {
    pki = await testPki();
  });
  after(async () => {
    await pki.close();
  });

  function capture(): { log: pino.Logger; lines: Record<string, unknown>[] } {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _e, done) {
        for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    });
    return { log: pino({ level: 'info' }, sink), lines };
  }

  const notAfter = (file: string): number => Date.parse(new X509Certificate(pemBlocks(readFileSync(file, 'utf8'))[0]!.text).validTo);

  test('every certificate of every file counts (a bundle\'s leaf, a trust bundle\'s CAs); a missing file adds none', () => {
    const certs = readCertificates([
      { what: '--a', file: pki.files.proxy },
      { what: '--b', file: pki.files.ca },
      { what: '--c', file: '/nonexistent/file.pem' },
    ]);
    assert.deepEqual(certs.map((c) => c.what), ['--a', '--b']);
    assert.match(certs[0]!.subject, /CN=proxy/);
  });

  test('the seconds until the first expiry is the earliest notAfter of all the files; none without certificates', () => {
    const { log } = capture();
    const now = Date.now();
    const e = watchCertificates([{ what: '--ca', file: pki.files.ca }, { what: '--bundle', file: pki.files.proxy }, { what: '--none', file: '' }], { warningHours: 0, log, now: () => now });
    try {
      assert.equal(e.sources.length, 2, 'an empty path is not watched');
      assert.equal(e.secondsUntilFirstExpiry(), Math.floor((notAfter(pki.files.proxy) - now) / 1000), 'the 30-day leaf comes before the 365-day CA');
    } finally {
      e.close();
    }
    const empty = watchCertificates([{ what: '--x', file: '' }], { warningHours: 1, log });
    assert.equal(empty.secondsUntilFirstExpiry(), undefined);
    empty.close();
  });

  test('under the threshold a warning names the flag, the file and the hours left: at start, then at most once an hour', () => {
    const { log, lines } = capture();
    let now = Date.now();
    const e = watchCertificates([{ what: '--tls-credential-bundle', file: pki.files.proxy }], { warningHours: 31 * 24, log, now: () => now, refreshMs: 3_600_000 });
    try {
      assert.equal(lines.length, 1);
      assert.equal(lines[0]!.level, 40);
      assert.equal(lines[0]!.msg, 'a certificate expires soon');
      assert.equal(lines[0]!.flag, '--tls-credential-bundle');
      assert.equal(lines[0]!.file, pki.files.proxy);
      assert.ok(Number(lines[0]!.hoursLeft) > 29 * 24 && Number(lines[0]!.hoursLeft) <= 30 * 24, String(lines[0]!.hoursLeft));
      now += 30 * 60_000;
      e.check();
      assert.equal(lines.length, 1, 'not again within the hour');
      now += 31 * 60_000;
      e.check();
      assert.equal(lines.length, 2, 'again after an hour');
    } finally {
      e.close();
    }
  });

  test('above the threshold, or with the threshold at 0, nothing is logged; an expired certificate says so', () => {
    const quiet = capture();
    watchCertificates([{ what: '--a', file: pki.files.proxy }], { warningHours: 24, log: quiet.log }).close();
    watchCertificates([{ what: '--a', file: pki.badWorkers.expired }], { warningHours: 0, log: quiet.log }).close();
    assert.equal(quiet.lines.length, 0);
    const loud = capture();
    const e = watchCertificates([{ what: '--a', file: pki.badWorkers.expired }], { warningHours: 1, log: loud.log });
    assert.equal(loud.lines[0]?.msg, 'a certificate has expired');
    assert.ok((e.secondsUntilFirstExpiry() ?? 0) < 0, 'negative once expired');
    e.close();
  });

  test('the gauge: actor_edge_<component>_tls_certificate_expiry_seconds, merged over processes by its minimum; absent without files', async () => {
    const { log } = capture();
    const soon = watchCertificates([{ what: '--a', file: pki.badWorkers.expired }], { warningHours: 0, log });
    const later = watchCertificates([{ what: '--a', file: pki.files.proxy }], { warningHours: 0, log });
    const none = watchCertificates([], { warningHours: 0, log });
    try {
      const [r1, r2, r3] = [new Registry(), new Registry(), new Registry()];
      registerCertificateExpiry(r1, 'proxy', soon);
      registerCertificateExpiry(r2, 'proxy', later);
      registerCertificateExpiry(r3, 'proxy', none);
      assert.match(await r2.metrics(), /^actor_edge_proxy_tls_certificate_expiry_seconds \d+$/m);
      assert.doesNotMatch(await r3.metrics(), /certificate_expiry/);
      const merged = AggregatorRegistry.aggregate([await r1.getMetricsAsJSON(), await r2.getMetricsAsJSON()]);
      const value = Number(/^actor_edge_proxy_tls_certificate_expiry_seconds (-?\d+)$/m.exec(await merged.metrics())?.[1]);
      assert.equal(value, soon.secondsUntilFirstExpiry());
    } finally {
      for (const e of [soon, later, none]) e.close();
    }
  });

  test('certExpiryWarningFlag: a week by default, 0 the least, the component\'s variable, section and help', () => {
    assert.equal(CERT_EXPIRY_WARNING_HOURS, 168);
    assert.deepEqual(certExpiryWarningFlag('X', 'x loads'), {
      type: 'number',
      env: 'X',
      default: 168,
      min: 0,
      help: 'Log a warning while a certificate x loads expires within this many hours (0: never).',
    });
    assert.equal(certExpiryWarningFlag('X', 'x loads', 'ops').section, 'ops');
  });
});
