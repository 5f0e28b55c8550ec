/**
 * Prometheus metrics of the budgets and the overload manager, read from their tallies and levels when scraped
 * (docs/operating.md). With `--workers N` the primary merges the processes: the state and the readings by
 * their maximum, the configured limits and thresholds once, everything else summed.
 */
import type { Registry } from 'prom-client';
import { samplesBy, scrapedCounter, scrapedCounterBy, scrapedGauge, scrapedGaugeBy } from '../../../lib/prom-metrics.js';
import { PROXY_METRIC_PREFIX as P } from '../metrics.js';
import type { OverloadSources } from './stats.js';

/** The `reason` label of `…_shed_total`, per tally. */
const SHED_LABELS = Object.freeze({
  overloadMiss: 'overload_miss',
  overloadAll: 'overload_all',
  extprocQueueTimeout: 'extproc_queue_timeout',
  extprocQueueFull: 'extproc_queue_full',
});

export function registerOverloadMetrics(registry: Registry, s: OverloadSources): void {
  const { manager, budget, bodyBudget } = s;
  const t = manager.tallies;
  scrapedGauge(registry, {
    name: `${P}overload_state`,
    help: 'The overload state: 0 normal, 1 shed-misses (misses and new connections refused), 2 shed-all (every new request refused).',
    aggregator: 'max',
    read: () => manager.level,
  });
  scrapedCounterBy(registry, {
    name: `${P}overload_transitions_total`,
    help: 'Overload state changes, by the state entered.',
    labelNames: ['state'],
    read: () => samplesBy('state', t.transitions),
  });
  scrapedGauge(registry, {
    name: `${P}overload_loop_delay_seconds`,
    help: 'The event-loop delay monitor\'s last reading: the mean delay over the last sampling interval (0 when both its thresholds are off).',
    aggregator: 'max',
    read: () => manager.readings.loopDelayMs / 1000,
  });
  scrapedGaugeBy(registry, {
    name: `${P}overload_loop_delay_threshold_seconds`,
    help: 'The event-loop delay at which the state goes to shed-misses (--overload-loop-delay-ms) and shed-all (--overload-loop-delay-critical-ms); 0: off.',
    labelNames: ['state'],
    aggregator: 'first',
    read: () => samplesBy('state', { 'shed-misses': manager.triggers.loopDelayMs.shedMisses / 1000, 'shed-all': manager.triggers.loopDelayMs.shedAll / 1000 }),
  });
  scrapedGauge(registry, {
    name: `${P}overload_heap_used_bytes`,
    help: 'The heap monitor\'s last reading: the V8 heap in use (0 when both its thresholds are off).',
    aggregator: 'max',
    read: () => manager.readings.heapUsedBytes,
  });
  scrapedGaugeBy(registry, {
    name: `${P}overload_heap_threshold_bytes`,
    help: 'The heap in use at which the state goes to shed-misses (--overload-heap-bytes) and shed-all (--overload-heap-critical-bytes); 0: off.',
    labelNames: ['state'],
    aggregator: 'first',
    read: () => samplesBy('state', { 'shed-misses': manager.triggers.heapUsedBytes.shedMisses, 'shed-all': manager.triggers.heapUsedBytes.shedAll }),
  });
  scrapedCounterBy(registry, {
    name: `${P}shed_total`,
    help: 'Requests answered 503 with Retry-After without being served, by reason: overload_miss (a miss at shed-misses), overload_all (any request at shed-all), extproc_queue_timeout, extproc_queue_full, replay_budget (a body that had to be read whole found the replay budget spent), body_budget (a request body found the budget of bodies in flight spent).',
    labelNames: ['reason'],
    read: () => [
      ...Object.entries(SHED_LABELS).map(([k, reason]) => [{ reason }, t.shed[k as keyof typeof SHED_LABELS]] as const),
      [{ reason: 'replay_budget' }, budget.bufferedRefused] as const,
      [{ reason: 'body_budget' }, bodyBudget.refused] as const,
    ],
  });
  scrapedGauge(registry, { name: `${P}body_inflight_bytes`, help: 'Shares of the body budget reserved now by the request bodies in flight (not yet received whole).', read: () => bodyBudget.inUseBytes });
  scrapedGauge(registry, { name: `${P}body_inflight_budget_bytes`, help: '--body-inflight-budget-bytes: the most shares of request bodies in flight at once (0: no budget).', aggregator: 'first', read: () => bodyBudget.capacity });
  scrapedGauge(registry, { name: `${P}connections_active`, help: 'Client connections open now, every client listener together (the admin listener not counted).', read: () => t.connectionsOpen });
  scrapedGauge(registry, { name: `${P}connections_limit`, help: '--max-connections: client connections beyond it are closed at once (0: no limit).', aggregator: 'first', read: () => s.maxConnections });
  scrapedCounterBy(registry, {
    name: `${P}connections_refused_total`,
    help: 'Client connections closed as they were accepted, by reason: limit (--max-connections open already), overload (shed-misses or shed-all).',
    labelNames: ['reason'],
    read: () => samplesBy('reason', t.connectionsRefused),
  });
  scrapedGauge(registry, { name: `${P}replay_buffer_bytes`, help: 'Request-body bytes retained for replay now, every request together.', read: () => budget.inUseBytes });
  scrapedGauge(registry, { name: `${P}replay_budget_bytes`, help: '--replay-buffer-budget-bytes: the most request-body bytes retained for replay at once (0: no budget).', aggregator: 'first', read: () => budget.capacity });
  scrapedCounter(registry, {
    name: `${P}replay_streamed_total`,
    help: 'Request bodies that found the replay budget spent and streamed through without replay (they cannot be re-run).',
    read: () => budget.streamedWithoutReplay,
  });
  scrapedGauge(registry, { name: `${P}extproc_queue_active`, help: 'Misses waiting now for an ext_proc stream (--extproc-max-streams are in use).', read: () => t.extprocQueueWaiting });
  scrapedGauge(registry, { name: `${P}extproc_slots_active`, help: 'Misses holding one of the --extproc-max-streams ext_proc stream slots now.', read: () => t.extprocStreamsInFlight });
  scrapedCounter(registry, { name: `${P}extproc_queued_total`, help: 'Misses that had to wait in the ext_proc queue for a stream (timed-out and full ones: shed_total).', read: () => t.extprocQueued });
}
