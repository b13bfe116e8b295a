import type { AlertView } from '../dashboard/alert-view.ts';
import { ALERT_CONDITIONS } from '../dashboard/stage-metrics.ts';
import type { PipelineSnapshot } from './snapshot.ts';

/** One stage's row: rates between the last two snapshots, totals since start. */
export interface StageRow {
  stage: string;
  instances: number;
  recordsPerSec: number;
  lag: number;
  commits: number;
  aborts: number;
  recoveries: number;
  /** The runtime alert conditions active on any instance, and `not_ready` when an instance is not ready. */
  conditions: string[];
}

/** What one frame shows. */
export interface ViewModel {
  startedAt: number;
  at: number;
  linesIn: number;
  linesPerSec: number;
  openBatches?: number;
  stages: StageRow[];
  alertCount: number;
  /** The newest alerts, oldest first. */
  recentAlerts: AlertView[];
}

/**
 * Folds snapshots into what the view shows. A counter that went down (a worker restarted with a new
 * registry) counts its new total as the increase, never as a negative rate.
 */
export class ViewState {
  #prev: PipelineSnapshot | undefined;
  #model: ViewModel | undefined;
  readonly #alerts: AlertView[] = [];

  constructor(
    private readonly startedAt: number,
    private readonly keepAlerts = 10,
  ) {}

  /** Adds a snapshot; returns the model and the alerts new in it. */
  push(snap: PipelineSnapshot): { model: ViewModel; fresh: AlertView[] } {
    const prev = this.#prev;
    const dt = prev ? (snap.at - prev.at) / 1000 : 0;
    const rate = (cur: number, before: number | undefined) =>
      before === undefined || dt <= 0 ? 0 : (cur >= before ? cur - before : cur) / dt;
    this.#alerts.push(...snap.alerts);
    const stages = snap.stages.map((s): StageRow => {
      const before = prev?.stages.find((p) => p.stage === s.stage);
      return {
        stage: s.stage,
        instances: s.instances,
        recordsPerSec: rate(s.recordsIn, before?.recordsIn),
        lag: s.lag,
        commits: s.commits,
        aborts: s.aborts,
        recoveries: s.recoveries,
        // A failed worker (e.g. one Kafka keeps refusing) stays in the process but is not ready.
        conditions: [
          ...(s.ready < s.instances ? ['not_ready'] : []),
          ...ALERT_CONDITIONS.filter((c) => s.alerts[c] > 0),
        ],
      };
    });
    this.#model = {
      startedAt: this.startedAt,
      at: snap.at,
      linesIn: snap.linesIn,
      linesPerSec: rate(snap.linesIn, prev?.linesIn),
      ...(snap.openBatches !== undefined ? { openBatches: snap.openBatches } : {}),
      stages,
      alertCount: this.#alerts.length,
      recentAlerts: this.#alerts.slice(-this.keepAlerts),
    };
    this.#prev = snap;
    return { model: this.#model, fresh: snap.alerts };
  }

  get model(): ViewModel | undefined {
    return this.#model;
  }

  /** Every alert seen since the start, oldest first. */
  get alerts(): readonly AlertView[] {
    return this.#alerts;
  }
}
