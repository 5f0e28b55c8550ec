/**
 * gRPC handlers of ateapi.Control: decode, validate, call the control plane, encode; every call is counted by
 * method and status code, answers UNAVAILABLE during an admin-set outage, and the reads (GetActor,
 * GetActorEgressPolicy) answer after `readLatencyMs`. Errors leave as the StubError's code and message.
 */
import * as grpc from '@grpc/grpc-js';
import { controlService } from '../lib/resume/control-client.js';
import { isResourceName } from '../lib/actor-ref.js';
import type * as api from './ateapi-types.js';
import { asStubError, errors } from './errors.js';
import { validRef, type ControlPlane } from './control-plane.js';
import { actorMessage, workerMessage } from './messages.js';
import { egressPolicyMessage } from '../lib/egress/policy-message.js';
import type { RpcCounters } from './rpc-counters.js';

export function controlServiceDefinition(): grpc.ServiceDefinition {
  return controlService().service;
}

type Handler<Req, Res> = (request: Req) => Promise<Res> | Res;

function unary<Req, Res>(method: string, counters: RpcCounters, handler: Handler<Req, Res>): grpc.handleUnaryCall<Req, Res> {
  return (call, callback) => {
    let result: Promise<Res>;
    try {
      result = Promise.resolve(handler(call.request));
    } catch (err) {
      result = Promise.reject(err);
    }
    result.then(
      (response) => {
        counters.count(method, grpc.status.OK);
        callback(null, response);
      },
      (err: unknown) => {
        const e = asStubError(err);
        counters.count(method, e.code);
        callback({ code: e.code, details: e.message });
      },
    );
  };
}

export function controlHandlers(cp: ControlPlane, counters: RpcCounters): grpc.UntypedServiceImplementation {
  const store = cp.store;
  // Every Control call first checks for an admin-set outage (then it answers UNAVAILABLE, counted as such).
  const gated = <Req, Res>(method: string, handler: Handler<Req, Res>) =>
    unary<Req, Res>(method, counters, (req) => {
      cp.assertAvailable();
      return handler(req);
    });
  return {
    GetActor: gated<api.GetActorRequest, api.ActorResponse>('GetActor', (req) => {
      const ref = validRef(req.actor_ref);
      return cp.read(() => ({ actor: actorMessage(store, cp.get(ref)) }));
    }),
    // NOT_FOUND both for an unknown actor and for an actor without a policy (which reaches nothing).
    GetActorEgressPolicy: gated<api.GetActorEgressPolicyRequest, api.GetActorEgressPolicyResponse>('GetActorEgressPolicy', (req) => {
      const ref = validRef(req.actor_ref);
      return cp.read(() => {
        const stored = cp.egress.get(ref);
        return { policy: egressPolicyMessage(ref.atespace, ref.name, stored.policy, stored.generation) };
      });
    }),
    CreateActor: gated<api.CreateActorRequest, api.ActorResponse>('CreateActor', (req) => ({
      actor: actorMessage(store, cp.create(validRef(req.actor_ref), req.actor_template_namespace, req.actor_template_name)),
    })),
    SuspendActor: gated<api.SuspendActorRequest, api.ActorResponse>('SuspendActor', async (req) => ({
      actor: actorMessage(store, await cp.suspend(validRef(req.actor_ref))),
    })),
    ResumeActor: gated<api.ResumeActorRequest, api.ActorResponse>('ResumeActor', async (req) => ({
      actor: actorMessage(store, (await cp.resume(validRef(req.actor_ref))).actor),
    })),
    DeleteActor: gated<api.DeleteActorRequest, Record<string, never>>('DeleteActor', async (req) => {
      await cp.delete(validRef(req.actor_ref));
      return {};
    }),
    ListWorkers: gated<Record<string, never>, api.ListWorkersResponse>('ListWorkers', () => ({
      workers: [...store.workers.values()].filter((w) => w.attached).map((w) => workerMessage(store, w)),
    })),
    ListActors: gated<api.ListActorsRequest, api.ListActorsResponse>('ListActors', (req) => {
      if (req.atespace !== '' && !isResourceName(req.atespace)) throw errors.invalidArgument(`atespace "${req.atespace}" is not a valid resource name`);
      if (req.page_size < 0) throw errors.invalidArgument('page_size must not be negative');
      let start = 0;
      if (req.page_token !== '') {
        start = /^[0-9]{1,9}$/.test(req.page_token) ? Number(req.page_token) : NaN;
        if (!Number.isInteger(start)) throw errors.invalidArgument(`invalid page_token "${req.page_token}"`);
      }
      const all = store.listActors(req.atespace || undefined);
      const end = req.page_size === 0 ? all.length : Math.min(all.length, start + req.page_size);
      return {
        actors: all.slice(start, end).map((a) => actorMessage(store, a)),
        next_page_token: end < all.length ? String(end) : '',
      };
    }),
  };
}
