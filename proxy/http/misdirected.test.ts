import { test } from 'node:test';
import assert from 'node:assert/strict';
import { authorityHost, checkSni } from './misdirected.js';

const A = 'actor-001.demo.actors.resources.substrate.ate.dev';
const B = 'actor-002.demo.actors.resources.substrate.ate.dev';

test('authorityHost: the host of host[:port], IP-literals with their brackets', () => {
  const table: [string, string][] = [
    [A, A],
    [`${A}:8443`, A],
    ['127.0.0.1:8443', '127.0.0.1'],
    ['[::1]:8443', '[::1]'],
    ['[::1]', '[::1]'],
    ['[::1', '[::1'],
  ];
  for (const [authority, host] of table) assert.equal(authorityHost(authority), host, authority);
});

test('checkSni: serve when the authority is the SNI; 421 for another name; no SNI is never misdirected', () => {
  const table: [authority: string, sni: string | false | undefined, expected: 'serve' | 'misdirected'][] = [
    [A, A, 'serve'],
    [`${A}:8443`, A, 'serve'],
    [A.toUpperCase(), A, 'serve'],
    [`${A}.`, A, 'serve'],
    [A, `${A}.`, 'serve'],
    [B, A, 'misdirected'],
    [`${B}:8443`, A, 'misdirected'],
    // A suffix or prefix of the SNI is another name.
    [`x${A}`, A, 'misdirected'],
    [A.slice(1), A, 'misdirected'],
    ['127.0.0.1:8443', A, 'misdirected'],
    ['[::1]:8443', A, 'misdirected'],
    // No SNI: the client connected by address and chose no replica by name.
    [B, false, 'serve'],
    [B, undefined, 'serve'],
    [B, '', 'serve'],
  ];
  for (const [authority, sni, expected] of table) {
    assert.equal(checkSni(authority, sni).kind, expected, `${authority} on SNI ${String(sni)}`);
  }
  assert.deepEqual(checkSni(`${B}:8443`, A.toUpperCase()), { kind: 'misdirected', host: B, sni: A });
});
