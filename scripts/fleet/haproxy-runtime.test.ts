import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isUp, parseServerStates } from './haproxy-runtime.js';

// The first columns of HAProxy 2.6's `show stat` (the parser looks columns up by name; the rest are cut here).
const HEADER = '# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status,weight,act,bck,chkfail,chkdown,lastchg,downtime,qlimit,pid,iid,sid,throttle,lbtot,tracked,type,rate,rate_lim,rate_max,check_status,check_code';
const row = (px: string, sv: string, stot: number, status: string, check: string): string =>
  [px, sv, 0, 0, 0, 0, '', stot, 0, 0, '', 0, '', 0, 0, 0, 0, status, 1, 1, 0, 0, 0, 1, 0, '', 1, 3, 1, '', 0, '', 2, 0, '', 0, check, 200].join(',');

test('show stat: the fleet backend servers with status, last check and sessions; other rows left out', () => {
  const csv = [
    HEADER,
    'fleet,FRONTEND,,,0,0,4096,9,0,0,0,0,0,,,,,OPEN',
    row('replicas', 'r1', 7, 'UP', 'L7OK'),
    row('replicas', 'r2', 2, 'DOWN', 'L4CON'),
    row('replicas', 'r3', 0, 'MAINT', ''),
    row('replicas', 'r4', 1, 'UP 1/2', 'L7STS'),
    row('replicas', 'BACKEND', 10, 'UP', ''),
    row('other', 'x1', 0, 'UP', 'L7OK'),
    '',
  ].join('\n');
  const servers = parseServerStates(csv);
  assert.deepEqual(servers, [
    { name: 'r1', status: 'UP', checkStatus: 'L7OK', sessions: 7 },
    { name: 'r2', status: 'DOWN', checkStatus: 'L4CON', sessions: 2 },
    { name: 'r3', status: 'MAINT', checkStatus: '', sessions: 0 },
    { name: 'r4', status: 'UP 1/2', checkStatus: 'L7STS', sessions: 1 },
  ]);
  assert.deepEqual(servers.filter(isUp).map((s) => s.name), ['r1'], 'a server on its way down takes no new traffic');
});

test('show stat: an answer that is not the CSV is an error', () => {
  assert.throws(() => parseServerStates('Unknown command.\n'), /unexpected "show stat" answer/);
  assert.throws(() => parseServerStates('# pxname,status\n'), /no svname column/);
});
