/**
 * The admin HTTP API (fastify): the common ops routes (lib/ops-routes.ts: /ready, /stats, /stats/reset, /metrics),
 * actors (list, inspect with delivered request ids,
 * create, delete, resume, suspend, move, egress policy, certificate), workers (list, stop, start), run-time latencies (PUT /config),
 * churn, and a control-plane outage (POST /outage {"ms"}: every ateapi.Control call answers UNAVAILABLE). Bad input → 400 with a JSON error; unknown actor or worker → 404.
 */
import net from 'node:net';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { createAdminApp } from '../lib/admin-app.js';
import type { Registry } from 'prom-client';
import { validRef, type ControlPlane } from './control-plane.js';
import type { Logger } from 'pino';
import { registerOpsRoutes, type Readiness } from '../lib/ops-routes.js';
import { grpcCodeName } from '../lib/wire-contract.js';
import { asStubError, errors, httpStatusOf } from './errors.js';
import { actorView, egressPolicyView, workerView } from './messages.js';
import { checkedPolicy } from './egress-policies.js';
import { ActorCertificates, lifetimeOf } from './actor-certificates.js';
import type { RpcCounters } from './rpc-counters.js';
import { applySettings } from './settings.js';
import { Churn, parseChurnRates } from './churn.js';
import { createStubMetrics } from './metrics.js';
import { StubStats } from './stats.js';
import type { WorkerTlsCounters } from './worker/tls.js';
import { registerCertificateExpiry, type CertificateExpiry } from '../lib/tls/expiry.js';

function withCertificateExpiry(registry: Registry, expiry: CertificateExpiry | undefined): Registry {
  if (expiry !== undefined) registerCertificateExpiry(registry, 'apiserver-stub', expiry);
  return registry;
}

export interface AdminDeps {
  readonly cp: ControlPlane;
  readonly counters: RpcCounters;
  readonly churn: Churn;
  readonly readiness: () => Readiness;
  /** The in-process workers' mTLS counters (reported in /stats as `workerTls`). */
  readonly workerTls?: WorkerTlsCounters;
  /** The certificates the stub loads, exported as `actor_edge_apiserver_stub_tls_certificate_expiry_seconds`. */
  readonly certificateExpiry?: CertificateExpiry;
  /** Where state-changing calls are logged with the caller's address. */
  readonly log?: Logger;
  /** Mints actor certificates (`--actor-ca-dir`); absent: the route answers 501. */
  readonly actorCertificates?: ActorCertificates;
}

interface ActorParams {
  atespace: string;
  name: string;
}
interface WorkerParams {
  ip: string;
}

function sendError(reply: FastifyReply, err: unknown): FastifyReply {
  const e = asStubError(err);
  return reply.code(httpStatusOf(e.code)).send({ error: e.message, code: grpcCodeName(e.code) });
}

function workerIp(params: WorkerParams): string {
  if (!net.isIP(params.ip)) throw errors.invalidArgument(`"${params.ip}" is not an IP address`);
  return params.ip;
}

export function buildAdmin({ cp, counters, churn, readiness, workerTls, certificateExpiry, log, actorCertificates = new ActorCertificates(undefined) }: AdminDeps): FastifyInstance {
  const app = createAdminApp();
  const store = cp.store;

  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
    if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
      return reply.code(err.statusCode).send({ error: err.message, code: 'BAD_REQUEST' });
    }
    return sendError(reply, err);
  });

  const stats = new StubStats(cp, counters, churn, workerTls);
  registerOpsRoutes(app, {
    component: 'apiserver-stub',
    errors: 'own',
    ...(log === undefined ? {} : { log }),
    readiness,
    stats: () => stats.document(),
    resetStats: () => stats.reset(),
    registry: withCertificateExpiry(createStubMetrics(cp, counters, workerTls), certificateExpiry),
    refresh: () => cp.flushWorkers(),
  });

  app.get<{ Querystring: { atespace?: string } }>('/actors', { config: { description: 'every actor: atespace, name, status, workerIp, version, seq (?atespace= to filter)' } }, async (req) => {
    await cp.flushWorkers();
    return { actors: store.listActors(req.query.atespace || undefined).map(actorView) };
  });
  app.get<{ Params: ActorParams }>('/actors/:atespace/:name', { config: { description: 'one actor, with every x-request-id it received' } }, async (req) => {
    const actor = cp.get(validRef(req.params));
    await cp.flushWorkers();
    return { ...actorView(actor), requestIds: [...actor.requestIds] };
  });
  app.post<{ Params: ActorParams }>('/actors/:atespace/:name', { config: { description: 'creates the actor (SUSPENDED)' } }, async (req, reply) => {
    const actor = cp.create(validRef(req.params));
    return reply.code(201).send(actorView(actor));
  });
  app.delete<{ Params: ActorParams }>('/actors/:atespace/:name', { config: { description: 'deletes the actor' } }, async (req) => {
    await cp.delete(validRef(req.params));
    return { ok: true };
  });
  app.post<{ Params: ActorParams }>('/actors/:atespace/:name/resume', { config: { description: 'resumes the actor on a free worker, as ResumeActor does' } }, async (req) => actorView((await cp.resume(validRef(req.params))).actor));
  app.post<{ Params: ActorParams }>('/actors/:atespace/:name/suspend', { config: { description: 'suspends the actor (frees its worker)' } }, async (req) => actorView(await cp.suspend(validRef(req.params))));
  app.post<{ Params: ActorParams }>('/actors/:atespace/:name/move', { config: { description: 'moves the actor to another free worker' } }, async (req) => actorView(await cp.move(validRef(req.params))));

  // Egress policies: one per actor, lib/egress/policy.ts's JSON; none (or zero rules): the actor reaches nothing.
  app.put<{ Params: ActorParams }>('/actors/:atespace/:name/egress-policy', { config: { description: 'sets the actor\'s egress policy ({"rules":[{"kind":"cidrs","cidrs":["127.0.0.1/32"],"ports":[9000]}]}); 400 names the bad field' } }, async (req) => {
    const ref = validRef(req.params);
    const policy = checkedPolicy(req.body);
    return egressPolicyView(ref, cp.egress.set(ref, policy));
  });
  app.get<{ Params: ActorParams }>('/actors/:atespace/:name/egress-policy', { config: { description: "the actor's egress policy and its generation (404: none, it reaches nothing)" } }, async (req) => {
    const ref = validRef(req.params);
    return egressPolicyView(ref, cp.egress.get(ref));
  });
  app.delete<{ Params: ActorParams }>('/actors/:atespace/:name/egress-policy', { config: { description: "removes the actor's egress policy (it then reaches nothing)" } }, async (req) => {
    cp.egress.delete(validRef(req.params));
    return { ok: true };
  });

  app.post<{ Params: ActorParams; Querystring: { format?: string } }>('/actors/:atespace/:name/certificate', { config: { description: 'mints a certificate for the running (or resuming) actor with the actor identity CA: {bundle, notAfter, notAfterMs}, or with ?format=pem the bundle alone (certificate then key, text); optional {"lifetimeMs"} (default 1 h); 409 not running, 501 no --actor-ca-dir' } }, async (req, reply) => {
    const format = req.query.format ?? 'json';
    if (format !== 'json' && format !== 'pem') throw errors.invalidArgument(`format: expected "json" or "pem", got "${format}"`);
    const actor = cp.get(validRef(req.params));
    const minted = await actorCertificates.mint(actor, lifetimeOf(req.body));
    if (format === 'json') return minted;
    return reply.type('application/x-pem-file').send(minted.bundle);
  });

  app.get('/workers', { config: { description: 'every worker: ip, alive, actors, requests' } }, async () => {
    await cp.flushWorkers();
    return { workers: [...store.workers.values()].map(workerView) };
  });
  app.post<{ Params: WorkerParams }>('/workers/:ip/stop', { config: { description: "closes the worker's listener and suspends its actors" } }, async (req) => workerView(await cp.stopWorker(workerIp(req.params))));
  app.post<{ Params: WorkerParams }>('/workers/:ip/start', { config: { description: 'the worker listens again' } }, async (req) => workerView(await cp.startWorker(workerIp(req.params))));

  app.get('/config', { config: { description: 'the run-time settings: resolveLatencyMs, readLatencyMs, coldResumeMs, autoCreate' } }, async () => ({ ...cp.settings }));
  app.put('/config', { config: { description: 'changes any subset of the run-time settings, at once' } }, async (req) => ({ ...applySettings(cp.settings, req.body) }));

  // A control-plane outage: every ateapi.Control call answers UNAVAILABLE for `ms` (workers stay attached).
  app.post('/outage', { config: { description: 'a control-plane outage: every ateapi.Control call answers UNAVAILABLE for {"ms"}' } }, async (req) => {
    const ms = (req.body as { ms?: unknown } | null)?.ms;
    if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0 || ms > 600_000) throw errors.invalidArgument('ms: expected a whole number of milliseconds from 0 to 600000');
    cp.outageUntil = Date.now() + ms;
    return { untilMs: cp.outageUntil };
  });
  app.delete('/outage', { config: { description: 'ends the outage' } }, async () => {
    cp.outageUntil = 0;
    return { untilMs: 0 };
  });

  app.get('/churn', { config: { description: 'the background churn: its rates and counts' } }, async () => churn.status());
  app.post('/churn', { config: { description: 'suspends and moves random RUNNING actors in the background ({"suspendPerSec","movePerSec"})' } }, async (req) => {
    churn.start(parseChurnRates(req.body));
    return churn.status();
  });
  app.delete('/churn', { config: { description: 'stops the churn' } }, async () => {
    churn.stop();
    return churn.status();
  });

  return app;
}
