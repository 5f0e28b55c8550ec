/**
 * The fleet end to end, small: real apiserver-stub, extproc, proxy replicas and Debian's HAProxy. Affinity mode:
 * each actor meets one replica; a SIGKILLed replica's actors are served by the others at once (HAProxy retries and
 * redispatches), GETs and POSTs alike sent after the kill; a rolling restart fails no request; a replica added
 * under the runtime API comes up and takes its share. SNI mode: TLS passes through to the replica the SNI hashes
 * to (one replica here), which answers a coalesced request for another actor 421; that actor's own connection
 * serves it.
 * (The benchmark's fleet scenario measures the same under load: `npm run bench -- --scenario fleet`.)
 * Needs processes: the fleet runs replicas as processes behind HAProxy, and a replica is SIGKILLed and restarted.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http2 from 'node:http2';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { actorHost, ATESPACE, SUFFIX } from '../../lib/testing/actors.js';
import { startExtproc, startStub, type Extproc, type Stub } from '../../proxy/testing/stack.js';
import { Fleet, type FleetOptions } from './fleet.js';
import { REPLICA_HEADER } from './haproxy-config.js';

const ACTORS = 16;
/** The pause between two requests of one loop during the rolling restart. */
const PACE_MS = 5;
const names = Array.from({ length: ACTORS }, (_, i) => `actor-${String(i).padStart(3, '0')}`);
let haveHaproxy = true;
let stub: Stub;
let extproc: Extproc;
const client = new Agent({ keepAliveTimeout: 2000, connections: 16 });

before(async () => {
  try {
    await promisify(execFile)('haproxy', ['-v']);
  } catch {
    haveHaproxy = false;
    return;
  }
  stub = await startStub({ workers: 4, capacity: 8, actors: ACTORS });
  extproc = await startExtproc(stub);
});

after(async () => {
  await client.close();
  await extproc?.component.stop();
  await stub?.component.stop();
});

function options(mode: FleetOptions['mode'], replicas: number, slots: number): FleetOptions {
  return {
    mode,
    replicas,
    slots,
    backends: { apiserverGrpc: stub.grpc, extprocGrpc: extproc.grpc, workerPort: stub.workerPort },
    proxyFlags: ['--access-log', 'off'],
    drainDelayMs: 1000, // above HAProxy's 750 ms detection (3 checks 250 ms apart)
    atespace: ATESPACE,
    actorSuffix: SUFFIX,
  };
}

interface Sent {
  readonly status: number;
  readonly replica: string;
}

async function send(fleet: Fleet, actor: string, method: 'GET' | 'POST' = 'GET'): Promise<Sent> {
  const res = await request(`${fleet.url}/`, {
    method,
    dispatcher: client,
    headers: { host: actorHost(actor), 'content-type': 'application/json' },
    ...(method === 'POST' ? { body: JSON.stringify({ actor }) } : {}),
  });
  await res.body.text();
  return { status: res.statusCode, replica: String(res.headers[REPLICA_HEADER]) };
}

/** Every actor once, in order: the replica that answered each. */
async function owners(fleet: Fleet, method: 'GET' | 'POST' = 'GET'): Promise<Map<string, Sent>> {
  const out = new Map<string, Sent>();
  for (const a of names) out.set(a, await send(fleet, a, method));
  return out;
}

function h2Get(session: http2.ClientHttp2Session, authority: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'GET', ':path': '/', ':authority': authority });
    let status = 0;
    stream.on('response', (h) => (status = Number(h[':status'])));
    stream.resume();
    stream.on('end', () => resolve(status));
    stream.on('error', reject);
  });
}

// Side by side: each test starts its own fleet (its own HAProxy, replicas and ports) in front of the file's stub and extproc.
describe('fleet', { concurrency: true }, () => {
  test('affinity: one replica per actor; a killed replica costs no request; a rolling restart none either; a new replica takes a share', async (t) => {
    if (!haveHaproxy) return t.skip('haproxy is not installed (Debian: apt-get install haproxy; .ci/run installs it)');
    const fleet = await Fleet.start(options('affinity', 2, 3));
    try {
      const first = await owners(fleet);
      const again = await owners(fleet);
      for (const a of names) {
        assert.equal(first.get(a)?.status, 200, a);
        assert.equal(again.get(a)?.replica, first.get(a)?.replica, `${a} moved between two rounds`);
      }
      const byReplica = (m: Map<string, Sent>, r: string): string[] => names.filter((a) => m.get(a)?.replica === r);
      const victim = byReplica(first, 'r1').length >= byReplica(first, 'r2').length ? 'r1' : 'r2';
      const survivor = victim === 'r1' ? 'r2' : 'r1';
      assert.ok(byReplica(first, victim).length > 0);

      // Killed: its actors are answered by the survivor at once, before any health check noticed (GETs retried
      // on a connect failure, POSTs too: a refused connect sent nothing).
      await fleet.kill(victim);
      for (const method of ['GET', 'POST'] as const) {
        const after = await owners(fleet, method);
        for (const a of names) assert.deepEqual(after.get(a), { status: 200, replica: survivor }, `${method} ${a}`);
      }
      await fleet.restart(victim);
      const back = await owners(fleet);
      for (const a of names) assert.equal(back.get(a)?.replica, first.get(a)?.replica, `${a} is back on its replica`);

      // A rolling restart with requests in flight all along: none fails. Each loop paces itself (a request every few
      // milliseconds still lands in every moment of a restart; unpaced, the loops only burn the CPU the replicas
      // need to start).
      let stop = false;
      const failures: string[] = [];
      let answered = 0;
      const loop = async (method: 'GET' | 'POST'): Promise<void> => {
        for (let i = 0; !stop; i++) {
          try {
            const r = await send(fleet, names[i % ACTORS] as string, method);
            if (r.status === 200) answered++;
            else failures.push(`${method} ${r.status}`);
          } catch (err) {
            failures.push(`${method} ${(err as Error).message}`);
          }
          await sleep(PACE_MS);
        }
      };
      const loops = [loop('GET'), loop('GET'), loop('POST')];
      await fleet.rollingRestart();
      stop = true;
      await Promise.all(loops);
      assert.deepEqual(failures, []);
      assert.ok(answered > 0);

      // Scale up: the spare slot comes up and takes some actors; every actor still answers.
      const added = await fleet.scaleUp();
      const scaled = await owners(fleet);
      assert.ok(names.every((a) => scaled.get(a)?.status === 200));
      assert.ok(byReplica(scaled, added.name).length > 0, `${added.name} took no actor`);
      const moved = names.filter((a) => scaled.get(a)?.replica !== first.get(a)?.replica);
      assert.ok(moved.every((a) => scaled.get(a)?.replica === added.name), 'consistent hashing: an actor only moves to the new replica');
    } finally {
      await fleet.stop();
    }
  });

  test('sni: TLS passes through to a replica; a coalesced request for another actor is 421; its own connection serves it', async (t) => {
    if (!haveHaproxy) return t.skip('haproxy is not installed (Debian: apt-get install haproxy; .ci/run installs it)');
    // One replica: the 421 is its answer to a connection whose SNI names another actor, whichever replica that is.
    const fleet = await Fleet.start(options('sni', 1, 1));
    const ca = await readFile(fleet.caFile as string);
    const connect = (actor: string): Promise<http2.ClientHttp2Session> =>
      new Promise((resolve, reject) => {
        const s = http2.connect(fleet.url, { servername: actorHost(actor), ca });
        s.once('connect', () => resolve(s));
        s.once('error', reject);
      });
    const [a, b] = [names[0] as string, names[1] as string];
    const sessions: http2.ClientHttp2Session[] = [];
    try {
      const onA = await connect(a);
      sessions.push(onA);
      assert.equal(await h2Get(onA, actorHost(a)), 200, 'the certificate covers every actor and the replica serves its own');
      assert.equal(await h2Get(onA, actorHost(b)), 421);
      const onB = await connect(b);
      sessions.push(onB);
      assert.equal(await h2Get(onB, actorHost(b)), 200);
    } finally {
      for (const s of sessions) s.close();
      await fleet.stop();
    }
  });
});
