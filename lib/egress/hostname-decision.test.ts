import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decideOnTraffic, type HostnameDecision } from './hostname-decision.js';
import type { FirstBytesAnswer } from './first-bytes.js';

const rules = [
  { rule: 1, hostnames: ['api.example.com'] },
  { rule: 3, hostnames: ['*.example.com', 'other.test'] },
];

test('the first rule whose patterns match allows; every other answer is a refusal with its reason', () => {
  const table: [FirstBytesAnswer, HostnameDecision][] = [
    [{ kind: 'sni', name: 'api.example.com' }, { kind: 'allow', rule: 1, name: 'api.example.com', by: 'sni' }],
    [{ kind: 'sni', name: 'API.example.COM' }, { kind: 'allow', rule: 1, name: 'API.example.COM', by: 'sni' }],
    [{ kind: 'host', name: 'www.example.com' }, { kind: 'allow', rule: 3, name: 'www.example.com', by: 'host' }],
    [{ kind: 'host', name: 'other.test' }, { kind: 'allow', rule: 3, name: 'other.test', by: 'host' }],
    [{ kind: 'sni', name: 'a.b.example.com' }, { kind: 'refuse', reason: 'no_match', name: 'a.b.example.com' }],
    [{ kind: 'host', name: '[::1]' }, { kind: 'refuse', reason: 'no_match', name: '[::1]' }],
    [{ kind: 'no-sni' }, { kind: 'refuse', reason: 'no_sni' }],
    [{ kind: 'unknown-protocol' }, { kind: 'refuse', reason: 'unknown_protocol' }],
    [{ kind: 'malformed', protocol: 'tls', detail: 'two host_names' }, { kind: 'refuse', reason: 'malformed', detail: 'tls: two host_names' }],
    [{ kind: 'too-large' }, { kind: 'refuse', reason: 'too_large' }],
    [{ kind: 'need-more' }, { kind: 'refuse', reason: 'timeout' }],
  ];
  for (const [answer, expected] of table) assert.deepEqual(decideOnTraffic(answer, rules), expected, JSON.stringify(answer));
});
