/**
 * `actor-edge certs` and `actor-edge certs actor`, run as the operator runs them on a temporary directory.
 * Needs processes: the CLI runs as its own process.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CLI_SCRIPT } from './launch-component.js';
import { runScript } from '../lib/testing/run-script.js';
import { checkActorCertificate } from '../lib/egress/actor-certificate.js';

let dir = '';
/** What `certs` printed. */
let printed = '';
const cli = (args: string[]) => runScript(CLI_SCRIPT, args, { env: { PATH: process.env.PATH ?? '' } });
const certOf = (file: string): X509Certificate => new X509Certificate(readFileSync(file));

before(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'certs-cli-'));
  const r = await cli(['certs', '--out', dir, '--workers', '0']);
  assert.equal(r.code, 0, r.stderr);
  printed = r.stdout;
});
after(() => rmSync(dir, { recursive: true, force: true }));

test('certs writes the actor identity CA, a CA of its own, and the egress listener\'s certificate from the development CA', () => {
  assert.match(printed, new RegExp(`^proxy egress +${path.join(dir, 'proxy-egress.pem')} +\\(DNS atenet-egress\\.ate-system\\.svc, localhost, IP 127\\.0\\.0\\.1\\)$`, 'm'));
  assert.match(printed, new RegExp(`^actor CA +${path.join(dir, 'actor-ca.pem')}, actor-ca\\.key `, 'm'));
  const devCa = certOf(path.join(dir, 'ca.pem'));
  const actorCa = certOf(path.join(dir, 'actor-ca.pem'));
  assert.ok(actorCa.ca);
  assert.ok(actorCa.checkPrivateKey(createPrivateKey(readFileSync(path.join(dir, 'actor-ca.key')))));
  assert.notEqual(actorCa.fingerprint256, devCa.fingerprint256);
  assert.ok(!actorCa.verify(devCa.publicKey), 'not signed by the development CA');
  const egress = certOf(path.join(dir, 'proxy-egress.pem'));
  assert.ok(egress.checkIssued(devCa) && egress.verify(devCa.publicKey), 'signed by the development CA');
  assert.equal(egress.subjectAltName, 'DNS:atenet-egress.ate-system.svc, DNS:localhost, IP Address:127.0.0.1');
  assert.equal(egress.checkHost('atenet-egress.ate-system.svc'), 'atenet-egress.ate-system.svc');
  assert.deepEqual(egress.keyUsage, ['1.3.6.1.5.5.7.3.1']);
  assert.ok(egress.checkPrivateKey(createPrivateKey(readFileSync(path.join(dir, 'proxy-egress.pem')))), 'one file: certificate and key');
});

test('certs actor mints one actor certificate that checkActorCertificate accepts for that actor', async () => {
  const out = path.join(dir, 'actors', 'agent-1.pem');
  const r = await cli(['certs', 'actor', '--ca-dir', dir, '--atespace', 'team-a', '--name', 'agent-1', '--lifetime-s', '120', '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^actor certificate {2}.*agent-1\.pem {2}\(spiffe:\/\/substrate-actor\.local\/ateom-for-actor\/team-a\/agent-1, valid until \d{4}-\d\d-\d\dT/);
  assert.equal(statSync(out).mode & 0o777, 0o600);
  const leaf = certOf(out);
  const actorCa = certOf(path.join(dir, 'actor-ca.pem'));
  assert.ok(leaf.checkPrivateKey(createPrivateKey(readFileSync(out))));
  const check = checkActorCertificate({ leaf, authorized: leaf.checkIssued(actorCa) && leaf.verify(actorCa.publicKey) }, Date.now());
  assert.equal(check.kind, 'actor', JSON.stringify(check));
  if (check.kind !== 'actor') return;
  assert.deepEqual(check.actor, { atespace: 'team-a', name: 'agent-1' });
  const lifetime = check.notAfterMs - Date.now();
  assert.ok(lifetime > 60_000 && lifetime <= 120_000, `${lifetime} ms left`);
});

test('certs actor --help prints its flags; missing or bad values are usage errors (exit 2)', async () => {
  const help = await cli(['certs', 'actor', '--help']);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /^Usage: actor-edge certs actor \[flags\]/);
  for (const flag of ['--ca-dir', '--atespace', '--name', '--lifetime-s', '--out']) assert.match(help.stdout, new RegExp(`^  ${flag} `, 'm'), flag);
  const out = path.join(dir, 'never.pem');
  const cases: [string[], RegExp][] = [
    [['--atespace', 'a', '--name', 'n', '--out', out], /--ca-dir DIR is required/],
    [['--ca-dir', dir, '--name', 'n', '--out', out], /--atespace ATESPACE is required/],
    [['--ca-dir', dir, '--atespace', 'Team_A', '--name', 'n', '--out', out], /--atespace: "Team_A" is not a DNS-1123 label/],
    [['--ca-dir', dir, '--atespace', 'a', '--name', 'n', '--out', out, '--lifetime-s', '0'], /--lifetime-s: must be at least 1/],
    [['--ca-dir', path.join(dir, 'nowhere'), '--atespace', 'a', '--name', 'n', '--out', out], /--ca-dir: .*holds no actor identity CA/],
    [['--ca-dir', dir, '--atespace', 'a', '--name', 'n', '--out', out, '--days', '3'], /Unknown option '--days'/],
  ];
  for (const [args, message] of cases) {
    const r = await cli(['certs', 'actor', ...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message, args.join(' '));
  }
  assert.throws(() => statSync(out), /ENOENT/, 'nothing written');
});
