/**
 * An egress listener on 127.0.0.1:0 for tests, in this process: the test PKI's certificates, a scripted ext_proc
 * server answering the egress CONNECTs (allow everything unless the test scripts otherwise), the proxy's ext_proc
 * client to it, the decider without a verdict cache (unless the test brings one), and the access-log lines and contained errors collected.
 */
import type { Logger } from 'pino';
import { pino } from 'pino';
import { encodeHostnameRules, EGRESS_METADATA_NAMESPACE, EGRESS_OUTCOMES, type EgressOutcome } from '../../../lib/egress/wire.js';
import type { HostnameCandidate } from '../../../lib/egress/policy.js';
import { AccessLog } from '../../ops/access-log.js';
import { createProxyContainment, internalErrorTallies, type InternalErrorTallies } from '../../ops/containment.js';
import { Counters } from '../../ops/stats.js';
import { GrpcExtProcClient } from '../../stages/ext-proc/grpc-client.js';
import type { ProcessingResponse } from '../../stages/ext-proc/messages.js';
import { startScriptedExtProc, type ExtProcScript, type ScriptedExtProc } from '../helpers.js';
import { DEFAULT_NEVER_DIAL } from '../../egress/forbidden-destinations.js';
import type { EgressListenerConfig } from '../../egress/config.js';
import { DecisionTallies, uncachedDecider, type EgressDecider } from '../../egress/egress-decider.js';
import { EgressListener } from '../../egress/listener.js';
import type { EgressTarget } from '../../egress/testing/egress-clients.js';
import { egressPki } from '../../egress/testing/egress-pki.js';

/** Who an answer names. */
interface AnsweredActor {
  readonly actorId: string;
  readonly atespace: string;
  readonly name: string;
}

const ACTOR_A: AnsweredActor = { actorId: 'uid-1', atespace: 'team', name: 'a' };

/** extproc's CONTINUE with the `actor_edge.egress` metadata: `verdict`, the actor, and the verdict's own `fields`. */
function continueAnswer(verdict: string, actor: AnsweredActor, fields: Readonly<Record<string, unknown>>): ProcessingResponse {
  const s = (v: string) => ({ kind: 'stringValue', stringValue: v });
  return {
    request_headers: { response: { status: 'CONTINUE' } },
    dynamic_metadata: {
      fields: {
        [EGRESS_METADATA_NAMESPACE]: {
          kind: 'structValue',
          structValue: { fields: { verdict: s(verdict), actor_id: s(actor.actorId), atespace: s(actor.atespace), name: s(actor.name), ...fields } },
        },
      },
    },
  };
}

/** extproc's allow answer: CONTINUE with the `actor_edge.egress` metadata. */
export function allowAnswer(rule = 0, actor: AnsweredActor = ACTOR_A): ProcessingResponse {
  return continueAnswer('allow', actor, { rule: { kind: 'numberValue', numberValue: rule } });
}

/** extproc's answer for a CONNECT to be decided on the traffic: CONTINUE with the `hostnames` rules (JSON text). */
export function hostnamesAnswer(rules: readonly HostnameCandidate[] | string, actor: AnsweredActor = ACTOR_A): ProcessingResponse {
  const text = typeof rules === 'string' ? rules : encodeHostnameRules(rules);
  return continueAnswer('hostnames', actor, { hostnames: { kind: 'stringValue', stringValue: text } });
}

/** extproc's immediate response for `outcome` (its status, body and details). */
export function outcomeAnswer(outcome: Exclude<EgressOutcome, 'allowed'>, body?: string): ProcessingResponse {
  const spec = EGRESS_OUTCOMES[outcome];
  return { immediate_response: { status: { code: spec.status }, body: Buffer.from(body ?? spec.body), details: spec.details } };
}

export interface EgressRig {
  readonly listener: EgressListener;
  readonly target: EgressTarget;
  readonly extproc: ScriptedExtProc;
  /** Access-log lines so far. */
  readonly lines: Record<string, unknown>[];
  readonly internalErrors: InternalErrorTallies;
  readonly counters: Counters;
  close(): Promise<void>;
}

export interface EgressRigOptions {
  readonly config?: Partial<Omit<EgressListenerConfig, 'tls' | 'clientCaFile' | 'listen'>>;
  readonly script?: ExtProcScript;
  /** ext_proc at another address (one nothing answers on, say) instead of the scripted server. */
  readonly extprocAddress?: string;
  readonly decider?: EgressDecider;
  readonly log?: Logger;
  readonly keepAliveTimeoutMs?: number;
  /** The serving certificate's bundle (default: the test PKI's). */
  readonly serverBundle?: string;
}

export async function startEgressRig(opts: EgressRigOptions = {}): Promise<EgressRig> {
  const pki = await egressPki();
  const log = opts.log ?? pino({ level: 'silent' });
  const extproc = await startScriptedExtProc(opts.script ?? (() => allowAnswer()));
  const counters = new Counters();
  const client = new GrpcExtProcClient({ address: opts.extprocAddress ?? extproc.address, messageTimeoutMs: 10_000, counters, log });
  const internalErrors = internalErrorTallies();
  const lines: Record<string, unknown>[] = [];
  const accessLog = new AccessLog({ kind: 'stdout' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const config: EgressListenerConfig = {
    listen: { host: '127.0.0.1', port: 0 },
    tls: { certFile: opts.serverBundle ?? pki.server.certFile, keyFile: opts.serverBundle ?? pki.server.keyFile, flags: { cert: '--egress-tls-cert', key: '--egress-tls-key' } },
    clientCaFile: pki.actorCaFile,
    tunnelIdleTimeoutMs: 300_000,
    tunnelMaxLifetimeMs: 3_600_000,
    maxTunnelsPerActor: 256,
    connectTimeoutMs: 5000,
    extprocTimeoutMs: 2000,
    neverDial: DEFAULT_NEVER_DIAL,
    sniTimeoutMs: 5000,
    sniMaxBytes: 16384,
    ...opts.config,
  };
  const listener = new EgressListener({
    config,
    engine: { headersTimeoutMs: 10_000, keepAliveTimeoutMs: opts.keepAliveTimeoutMs ?? 60_000, h2MaxConcurrentStreams: 100 },
    decider: opts.decider ?? uncachedDecider(new DecisionTallies()),
    extProc: client,
    guard: createProxyContainment(log, internalErrors),
    log,
    accessLog,
  });
  await listener.listen('127.0.0.1', 0);
  const { port } = listener.server.address() as { port: number };
  return {
    listener,
    target: { host: '127.0.0.1', port, ca: pki.serverCa },
    extproc,
    lines,
    internalErrors,
    counters,
    close: async () => {
      listener.closeAll();
      await listener.stopAccepting();
      client.close();
      await extproc.close();
    },
  };
}
