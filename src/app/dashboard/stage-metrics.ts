import {
  ALERT_CONDITIONS as WORKER_CONDITIONS,
  type AlertCondition,
} from '../../runtime/alert-conditions.ts';
import type { PromSample } from './prometheus-text.ts';

/**
 * The alert conditions the pages show per stage, in the runtime's order: all but `partition_unowned`,
 * which is about the group's partitions, not a stage instance.
 */
export const ALERT_CONDITIONS: readonly AlertCondition[] = WORKER_CONDITIONS.filter(
  (c) => c !== 'partition_unowned',
);

/** One stage's worker metrics, summed over its instances (counters are totals since each start). */
export interface StageMetrics {
  stage: string;
  /** Instances that reported metrics for this stage. */
  instances: number;
  /** Instances reporting ready (assigned and committing). */
  ready: number;
  recordsIn: number;
  recordsOut: number;
  commits: number;
  aborts: number;
  recoveries: number;
  lag: number;
  /** Per condition: how many instances have it active now. */
  alerts: Record<AlertCondition, number>;
}

const P = 'hamstring_worker_';

/**
 * Pipeline position of a stage name (full or short; `batch_handler` is the collector's batching,
 * `alert` the alert that covered a line); unknown names sort last, by name.
 */
export function stageRank(stage: string): number {
  const order = [
    'logserver',
    'collector',
    'batch_handler',
    'prefilter',
    'inspector',
    'detector',
    'alert',
    'monitoring',
  ];
  const i = order.findIndex((s) => stage.includes(s));
  return i === -1 ? order.length : i;
}

export function byPipelineOrder(a: string, b: string): number {
  return stageRank(a) - stageRank(b) || a.localeCompare(b);
}

/**
 * Sums the `hamstring_worker_*` series of every scraped instance per `stage` label. Series without
 * a stage label (process metrics, other exporters) are ignored.
 */
export function aggregateStageMetrics(samples: readonly PromSample[]): StageMetrics[] {
  const stages = new Map<string, StageMetrics>();
  const instances = new Map<string, Set<string>>();
  for (const s of samples) {
    const stage = s.labels.stage;
    if (stage === undefined || !s.name.startsWith(P) || !Number.isFinite(s.value)) continue;
    let m = stages.get(stage);
    if (!m) {
      m = emptyStage(stage);
      stages.set(stage, m);
      instances.set(stage, new Set());
    }
    instances.get(stage)?.add(s.labels.instance ?? '');
    switch (s.name.slice(P.length)) {
      case 'records_total':
        if (s.labels.direction === 'in') m.recordsIn += s.value;
        else if (s.labels.direction === 'out') m.recordsOut += s.value;
        break;
      case 'transactions_committed_total':
        m.commits += s.value;
        break;
      case 'transactions_aborted_total':
        m.aborts += s.value;
        break;
      case 'recoveries_total':
        m.recoveries += s.value;
        break;
      case 'consumer_lag':
        m.lag += s.value;
        break;
      case 'ready':
        m.ready += s.value;
        break;
      case 'alert': {
        const c = s.labels.condition as AlertCondition | undefined;
        if (c !== undefined && c in m.alerts) m.alerts[c] += s.value > 0 ? 1 : 0;
        break;
      }
    }
  }
  for (const [stage, set] of instances) {
    const m = stages.get(stage);
    if (m) m.instances = set.size;
  }
  return [...stages.values()].sort((a, b) => byPipelineOrder(a.stage, b.stage));
}

function emptyStage(stage: string): StageMetrics {
  return {
    stage,
    instances: 0,
    ready: 0,
    recordsIn: 0,
    recordsOut: 0,
    commits: 0,
    aborts: 0,
    recoveries: 0,
    lag: 0,
    alerts: Object.fromEntries(ALERT_CONDITIONS.map((c) => [c, 0])) as Record<AlertCondition, number>,
  };
}
