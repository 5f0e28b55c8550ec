/** The shapes every part of the benchmark shares: arm names, per-arm results and the report written to disk. */
import { H2_ARM_NAMES } from './h2-arms.js';

export const ARM_NAMES = ['direct', 'floor', 'floor-1', 'floor-ingress', 'A', 'A-mtls', 'A-extproc-mtls', 'B1', 'B2', 'C', 'C-mtls', ...H2_ARM_NAMES, 'fleet-affinity', 'fleet-rr', 'fleet-sni', 'egress-A', 'egress-C', 'heavy-none', 'heavy-inline', 'heavy-offload'] as const;
export type ArmName = (typeof ARM_NAMES)[number] | 'target';

export const SCENARIOS = ['steady', 'steady-post', 'churn', 'cold', 'many-actors', 'faults', 'fleet', 'grpc', 'overload', 'egress', 'heavy-filter', 'side-by-side'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** CPU and memory of one process over an arm's measured window. */
export interface ComponentUsage {
  /** proxy, extproc, apiserver-stub (control plane and its workers), floor, or loadgen (this process). */
  readonly component: string;
  readonly cpuMs: number;
  readonly cpuMsPerRequest: number;
  readonly peakRssBytes: number;
}

/** Cache counters of the proxy over the measured window (absent when the arm has no proxy cache). */
export interface CacheUsage {
  readonly hits: number;
  readonly misses: number;
  /**
   * Misses that waited for another request's miss of the same actor and were then routed from the binding it
   * learned: they open no ext_proc stream of their own (miss coalescing).
   */
  readonly coalesced: number;
  readonly hitRatio: number;
  readonly entries: number;
  readonly evictions: Readonly<Record<string, number>>;
}

/** The cold scenario's per-actor view: how long each actor took to answer its first success. */
export interface ColdUsage {
  readonly actors: number;
  readonly actorsAnswered: number;
  readonly firstSuccessP50Ms: number;
  readonly firstSuccessP99Ms: number;
  readonly firstSuccessMaxMs: number;
  readonly resumeCallsPerActor: number;
  readonly resumeOkPerActor: number;
  readonly concurrentPerActor: number;
}

/** What one phase of the faults scenario saw: the client's answers (by the time they arrived) and the counters' change. */
export interface FaultPhase {
  readonly name: string;
  readonly description: string;
  readonly durationS: number;
  readonly requests: number;
  /** Client-seen answers over the phase by status code. */
  readonly statusCounts: Readonly<Record<string, number>>;
  readonly non2xx: number;
  /**
   * Of `non2xx`, the 502s that were resets of non-replayable requests already written: the proxy's own count of
   * its 502 `PROXY_ERR_UPSTREAM_RESET_AFTER_SEND` answers over the phase (`resetsNotReplayable`), at most the
   * phase's client-seen 502s. Such a request was written whole to a worker that then reset, with a method never
   * sent twice (the POSTs in flight on a killed worker): the actor may have received it.
   */
  readonly non2xxNotReplayable: number;
  /** Requests the load generator saw fail without an answer (socket errors, its own timeouts). */
  readonly errors: number;
  /** The proxy's actor-cache hits and misses over the phase. */
  readonly hits: number;
  readonly misses: number;
  /** Bindings evicted over the phase, by reason (`stale`, `connect`, ...). */
  readonly evictions: Readonly<Record<string, number>>;
  /** Upstream connections the proxy failed to open over the phase. */
  readonly connectFailures: number;
  /** Requests failed at once, never sent, because their worker's address was down (outlier detection). */
  readonly failedFast: number;
  readonly resets: number;
  /** The proxy's `upstream.resetsNotReplayable` over the phase (counted when it answered, not when the answer arrived). */
  readonly resetsNotReplayable: number;
  readonly reruns: number;
  /** Fresh ext_proc streams the proxy opened for misses whose stream could not be opened. */
  readonly extprocRetries: number;
  /** ResumeActor answers by gRPC code name. */
  readonly resumeByCode: Readonly<Record<string, number>>;
}

/** The faults scenario's view: phase by phase, and what happened to the killed worker's actors. */
export interface FaultsUsage {
  readonly phases: readonly FaultPhase[];
  readonly workerProcesses: number;
  readonly proxyProcesses: number;
  readonly killedWorker: string;
  /** Actors the killed worker hosted. */
  readonly killedActors: number;
  /** Of those, answered 200 by a request sent right after the kill, from a worker other than the killed one. */
  readonly killedActorsMoved: number;
  /** How long ext_proc was down while it restarted, and the control plane's outage. */
  readonly extprocDownMs: number;
  readonly outageMs: number;
  /** Requests for cold (suspended) actors sent during phases (b) and (c), at `coldPerSecond`. */
  readonly coldRequests: number;
  readonly coldPerSecond: number;
}

/** One round of the grpc scenario: K server-streaming calls to one actor, all started at once. */
export interface GrpcRound {
  /** Each call's duration as its client saw it (its start to its status, any wait included), ms, in start order; their sum. */
  readonly callMs: readonly number[];
  readonly callMsSum: number;
  /** From the first call's start to the last call's status, ms. */
  readonly wallMs: number;
  /** Each call's streaming time: from its first reply to its status (0 without a reply), ms, same order; their sum. */
  readonly streamMs: readonly number[];
  readonly streamMsSum: number;
  /** Calls that did not end OK with every reply. */
  readonly errors: number;
}

/** A unary call issued while a long streaming call to the same worker was open. */
export interface UnarySample {
  readonly latencyMs: number;
  readonly ok: boolean;
  /** The stream had not ended when the unary call was answered. */
  readonly streamOpen: boolean;
}

/** The grpc scenario's view: concurrent streaming calls to one worker, and a unary call beside an open stream. */
export interface GrpcUsage {
  readonly worker: string;
  readonly streamActor: string;
  /** The actor the unary calls go to (on the same worker as streamActor when the placement allows). */
  readonly unaryActor: string;
  /** Concurrent calls per round (K). */
  readonly concurrency: number;
  /** Replies per streaming call, and the worker's interval between them. */
  readonly repliesPerCall: number;
  readonly replyIntervalMs: number;
  /** One streaming call at a time: each one's duration, and their median. */
  readonly aloneMs: readonly number[];
  readonly aloneP50Ms: number;
  readonly rounds: readonly GrpcRound[];
  /** Median of the rounds' wall times. */
  readonly wallP50Ms: number;
  /** wallP50Ms ÷ aloneP50Ms: about 1 when the K calls run together, about K when one at a time. */
  readonly wallPerCall: number;
  /**
   * The overlap ratio, Σ streamMsSum ÷ Σ wallMs over the rounds: how many calls were streaming at once, on average.
   * About K when the calls run together, about 1 (a little less: the gaps between calls) when one at a time.
   */
  readonly overlap: number;
  /**
   * Σ callMsSum ÷ Σ wallMs: the same from the client's durations, which include any wait for the worker. About K
   * when the calls run together, but (K + 1) ÷ 2 when one at a time (the i-th waited for the i − 1 before it).
   */
  readonly durationOverlap: number;
  /** Replies of the long stream the unary calls are issued beside. */
  readonly longStreamReplies: number;
  /** The unary call with no stream open (median). */
  readonly unaryAloneP50Ms: number;
  readonly unaryWhileStreaming: readonly UnarySample[];
  readonly unaryWhileStreamingP50Ms: number;
  readonly unaryWhileStreamingMaxMs: number;
}

/**
 * One phase of the fleet scenario's `fleet-affinity` arm, under load: what the client saw (failures by method),
 * what the workers saw twice, which actors changed replica and what it cost in ResumeActor calls.
 */
export interface FleetPhase {
  readonly name: 'kill' | 'rollout' | 'scale';
  readonly description: string;
  readonly durationS: number;
  readonly requests: number;
  /** GETs that failed: no answer, or an answer other than 2xx. */
  readonly getErrors: number;
  /** POSTs that failed the same way. */
  readonly postErrors: number;
  /** Requests without an answer (connection failed or closed, timeout), any method. */
  readonly errors: number;
  /** Answers other than 2xx, any method. */
  readonly non2xx: number;
  /** POSTs a worker received twice (request ids seen again by the stub). */
  readonly duplicates: number;
  /** Actors answered during the phase by another replica than the one that served them when it began. */
  readonly actorsMoved: number;
  /** ResumeActor calls the control plane received during the phase. */
  readonly resumeCalls: number;
  /** What the steady window's rate predicts for the phase's length: resumeCalls minus this is the phase's cost. */
  readonly baselineResumeCalls: number;
  readonly statusCounts: Readonly<Record<string, number>>;
}

/** The fleet scenario's view of one arm. */
export interface FleetUsage {
  readonly mode: 'affinity' | 'roundrobin' | 'sni';
  readonly replicas: number;
  /** Actors per replica at the end of the steady window (HTTP modes: from the answering replica's header). */
  readonly actorsByReplica: Readonly<Record<string, number>>;
  /** `sni`: requests sent on another actor's connection (counted when answered), and how many the replica answered 421. */
  readonly coalesced: number;
  readonly misdirected: number;
}

/** The kinds of flood the overload scenario sends beside its hit load. */
export type FloodKind = 'idle' | 'slowloris' | 'uploads' | 'cold';

/** What one flood of the overload scenario did, as its own clients saw it. */
export interface FloodOutcome {
  readonly kind: FloodKind;
  /** Connections (idle, slowloris, cold: one request on each) or concurrent uploaders the flood was sized to. */
  readonly planned: number;
  /** Connections the flood tried to open, and of them established. */
  readonly attempted: number;
  readonly connected: number;
  /** Connections that could not be opened, by error code (`ECONNREFUSED`, `ECONNRESET`, `ETIMEDOUT`, ...). */
  readonly connectErrors: Readonly<Record<string, number>>;
  /** Requests begun (uploads: every POST; cold: one per connection; idle and slowloris: 0, their heads never end). */
  readonly requests: number;
  /** Answers by HTTP status. */
  readonly statusCounts: Readonly<Record<string, number>>;
  /** Answers carrying a Retry-After header (how an overloaded proxy sheds). */
  readonly retryAfter: number;
  /** Requests that ended without an answer, by why (`reset`, `closed`, `timeout`, an error code), and write errors. */
  readonly errors: Readonly<Record<string, number>>;
  /** Connections the proxy closed (FIN or reset) while the flood held them, answered first or not. */
  readonly closedByProxy: number;
  /** Connections still open, and requests still unanswered, when the bench stopped the flood. */
  readonly openAtEnd: number;
  readonly inFlightAtEnd: number;
  /** Bytes the flood wrote (request heads and bodies). */
  readonly bytesSent: number;
  /** From the first connection attempt until the flood was in place (every connection tried; cold: requests written). */
  readonly setupMs: number;
  /** From the start to the bench stopping the flood (cold: to the last answer or failure). */
  readonly durationMs: number;
  /** cold: time from the requests' write to each answer's status line. */
  readonly answerMs?: { readonly p50: number; readonly p99: number; readonly max: number };
}

/** The proxy's resident memory over one phase of the overload scenario, from /proc/<pid>/status. */
export interface RssUsage {
  /** The most seen: the largest VmRSS sample, or VmHWM when the bench could reset it at the phase's start. */
  readonly peakBytes: number | null;
  readonly startBytes: number | null;
  /** When the flood was stopped, and after the phase's settling pause. */
  readonly endBytes: number | null;
  readonly afterBytes: number | null;
  readonly samples: number;
  /** VmHWM was reset at the phase's start (`/proc/<pid>/clear_refs`), so a peak between samples is seen too. */
  readonly hwmReset: boolean;
}

/** One phase of the overload scenario: the hit load beside one flood (none in the first). */
export interface OverloadPhase {
  readonly name: string;
  readonly description: string;
  /** The flood (null in the no-flood phase). */
  readonly flood: FloodOutcome | null;
  /** Seconds the hits were counted over: while the flood was held in full (cold: its requests to its last answer). */
  readonly windowS: number;
  readonly hits: {
    /** 2xx answers to the hit load in the window, and per second. */
    readonly ok: number;
    readonly rps: number;
    readonly non2xx: number;
    readonly errors: number;
    /** rps ÷ the no-flood phase's rps (null in that phase, or when it answered nothing). */
    readonly ratio: number | null;
    /**
     * 2xx per second in the second (--quick: half second) before the flood began, on the same proxy (the no-flood
     * phase: before its window): not a target, a gauge of what the shared machine allowed just then.
     */
    readonly beforeRps: number | null;
    /**
     * The hit load's latency over the whole phase (the second before the flood, its window and the stop), p50 and
     * p99 in ms: what the hits paid while their rate held (absent in reports recorded before it).
     */
    readonly latency?: { readonly p50Ms: number; readonly p99Ms: number };
  };
  readonly rss: RssUsage;
  /**
   * The proxy's shed and refused counts over the phase, from its /stats `overload.shed.*` and
   * `overload.connections.refused.*` (else the same in /metrics); null when it has no such counter, as a proxy
   * without an overload manager (`overload-report.ts`, `shedAndRefused`).
   */
  readonly shed: number | null;
  readonly refused: number | null;
  /** Every proxy counter about shedding, refusing, budgets or queues that changed over the phase, with its change. */
  readonly proxyCounters: Readonly<Record<string, number>>;
  /** The proxy process: its pid before and after (from /server_info), alive at the end, and restarted (pid changed). */
  readonly process: { readonly pid: number | null; readonly pidAfter: number | null; readonly alive: boolean; readonly restarted: boolean };
  /** The proxy's raw /stats at the phase's end (its process began with the phase's warm-up); absent if unreachable. */
  readonly proxyStats?: unknown;
  /** Present when the phase did not run (its processes did not start, or the bench failed). */
  readonly skipped?: string;
}

/** The overload scenario's view of its arm. */
export interface OverloadUsage {
  readonly phases: readonly OverloadPhase[];
  /** Flood sizes asked for, and as run (smaller when the file-descriptor limits did not allow them; see notes). */
  readonly requested: Readonly<Record<FloodKind, number>>;
  readonly sizes: Readonly<Record<FloodKind, number>>;
  readonly hotActors: number;
  /** The hit load's requests per second over all its connections (0: a closed loop). */
  readonly hitRate: number;
  readonly uploadActors: number;
  readonly uploadBytes: number;
  readonly uploadDelayMs: number;
  readonly slowlorisIntervalMs: number;
  /** Open-file limits (soft, hard) of the bench and the proxy when the phases began. */
  readonly fdLimits: { readonly bench: FdLimit | null; readonly proxy: FdLimit | null };
  /** The targets' thresholds. */
  readonly rssTargetBytes: number;
  readonly hitRatioTarget: number;
}

export interface FdLimit {
  readonly soft: number;
  readonly hard: number;
}

export interface ArmResult {
  readonly name: ArmName;
  readonly description: string;
  /** Responses received in the measured window (any status). */
  readonly requests: number;
  readonly durationS: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p90Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly meanMs: number;
  readonly non2xx: number;
  /** Connection errors and timeouts seen by the load generator. */
  readonly errors: number;
  readonly statusCounts: Readonly<Record<string, number>>;
  /** ResumeActor calls the control plane received (null when its stats were not reachable). */
  readonly resumeCalls: number | null;
  /** ext_proc streams opened (null when unknown). */
  readonly extprocStreams: number | null;
  readonly resumeCallsPer1k: number | null;
  readonly extprocStreamsPer1k: number | null;
  /** CPU ms per request summed over the server-side processes (load generator excluded). */
  readonly cpuMsPerRequest: number | null;
  readonly components: readonly ComponentUsage[];
  readonly loadgen: ComponentUsage;
  readonly cache?: CacheUsage;
  /** Proxy cache evictions (all reasons) and re-runs (all reasons); churn and many-actors. */
  readonly evictions?: number;
  readonly reruns?: number;
  /** Re-runs by their number within a request (`"1"`: first re-runs, `"2"`: second, ...). */
  readonly rerunsByAttempt?: Readonly<Record<string, number>>;
  /** Requests an actor served more than once (stub deliveries.duplicates); must be 0. */
  readonly duplicates?: number;
  /** ResumeActor calls made during the warm-up (the cold calls of a hot run). */
  readonly warmupResumeCalls?: number;
  /** Actors SUSPENDED when the measured window started (each may cost one cold call). */
  readonly suspendedAtStart?: number;
  readonly cold?: ColdUsage;
  readonly faults?: FaultsUsage;
  readonly grpc?: GrpcUsage;
  /** Fleet arms: ResumeActor calls per actor per cache TTL over the whole fleet (1 when each actor meets one cache). */
  readonly resumeCallsPerActorPerTtl?: number | null;
  /** The fleet-affinity arm: its kill, rollout and scale phases. */
  readonly phases?: readonly FleetPhase[];
  readonly fleet?: FleetUsage;
  readonly overload?: OverloadUsage;
  /** The egress scenario: what each tunnel cost the control plane, and the verdict cache. */
  readonly egress?: EgressUsage;
  /** The egress scenario, egress-C: tunnels held open while their actors' policies were removed, and how long they took to close. */
  readonly revocation?: EgressRevocationUsage;
  /** The heavy-filter scenario: the hits and the heavy POSTs apart, and the proxy's filter offload counts. */
  readonly heavyFilter?: HeavyFilterUsage;
  /**
   * `--tracing on`: spans the bench's receiver counted from the arm's start to its stop (its proxy's and extproc's,
   * warm-up included; a proxy exports the spans it still holds as it stops).
   */
  readonly tracedSpans?: number;
  readonly notes: readonly string[];
  /** The raw /stats bodies read at the end of the measured window, by process. */
  readonly stats?: Readonly<Record<string, unknown>>;
}

export interface TargetResult {
  readonly name: string;
  /** met / not-met, or `reported` for numbers with no pass line, `n/a` when an arm is missing. */
  readonly status: 'met' | 'not-met' | 'reported' | 'n/a';
  readonly detail: string;
  /**
   * How the report states it, when set: what was measured, and the bound it is judged against, e.g. measured
   * `C proxy CPU per request 1.14× floor's`, bound `≤ 1.05×`. Without them the report states `name`.
   */
  readonly measured?: string;
  readonly bound?: string;
  /** A correctness target (not a speed one): when not met, the run fails. */
  readonly correctness?: boolean;
}

export interface MachineInfo {
  readonly cpus: number;
  readonly cpuModel: string;
  readonly totalMemBytes: number;
  readonly platform: string;
  readonly node: string;
  readonly loadAvg: readonly number[];
}

export interface BenchReport {
  readonly scenario: ScenarioName;
  readonly startedAt: string;
  readonly machine: MachineInfo;
  readonly settings: Readonly<Record<string, unknown>>;
  readonly arms: readonly ArmResult[];
  /** Throughput ratios (rps of the first arm ÷ rps of the second); null when an arm did not run. */
  readonly ratios: Readonly<Record<string, number | null>>;
  readonly targets: readonly TargetResult[];
  /** Arms that failed to start or answered nothing. */
  readonly failures?: readonly string[];
}

/** One egress arm's control-plane reads and cache, over its measured window (`egress-report.ts`). */
export interface EgressUsage {
  readonly tunnels: number;
  readonly getActorCalls: number;
  readonly policyCalls: number;
  readonly getActorCallsPer1k: number | null;
  readonly policyCallsPer1k: number | null;
  /** The proxy's verdict cache (null when it is off). */
  readonly cache: { readonly hits: number; readonly misses: number; readonly joined: number; readonly entries: number } | null;
}

/** The egress revocation phase (`egress-revocation.ts`): tunnels open when their actors' policies were removed. */
export interface EgressRevocationUsage {
  /** Actors whose policies were removed. */
  readonly actors: number;
  readonly tunnelsOpen: number;
  /** Of those, closed by the proxy within the phase's wait. */
  readonly tunnelsClosed: number;
  /** From each actor's policy change to each of its tunnels' close (null: none closed). */
  readonly lagMs: { readonly p50: number; readonly p99: number; readonly max: number } | null;
  /** The proxy's verdict TTL: the lag's bound is this plus one ext_proc round trip (null: not read). */
  readonly ttlMs: number | null;
}

/** One kind of request of the heavy-filter load, over the measured window. */
export interface HeavyKindUsage {
  /** Answers of any status. */
  readonly requests: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly non2xx: number;
  /** Requests without an answer (connection error, timeout, not sent: too many waiting). */
  readonly errors: number;
}

/** The proxy's `/stats` `filterOffload` over the measured window (`heavy-report.ts`, `filterOffloadOf`). */
export interface FilterOffloadCounts {
  /** Offloaded calls by where they ran: a worker thread, or the event loop (no pool, or its queue was full). */
  readonly pool: number;
  readonly inline: number;
  /** Results dropped because their request no longer waited; calls that threw or whose thread died. */
  readonly stale: number;
  readonly errors: number;
  /** `--filter-workers`. */
  readonly workers: number;
}

/** The heavy-filter scenario's view of one arm (`scenarios/heavy-filter.ts`). */
export interface HeavyFilterUsage {
  /** GETs answered from the actor cache, which the filter lets through without reading anything. */
  readonly hits: HeavyKindUsage;
  /** POSTs with a JSON body: the filter's offloaded part parses it and burns `rounds` hashing rounds. */
  readonly heavy: HeavyKindUsage;
  /** Requests of either kind without a 2xx answer. */
  readonly errors: number;
  /** Null when the proxy's /stats had no `filterOffload` block. */
  readonly filterOffload: FilterOffloadCounts | null;
  /** Requests a second the load offered (both kinds), and every how many requests one is a heavy POST. */
  readonly offeredRate: number;
  readonly heavyEvery: number;
  /** SHA-256 rounds of each heavy call, sized once at the run's start, and one call's time as the bench measured it then. */
  readonly rounds: number;
  readonly workMs: number;
}
