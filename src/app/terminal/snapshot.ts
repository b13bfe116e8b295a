import type { AlertView } from '../dashboard/alert-view.ts';
import type { DashboardData } from '../dashboard/dashboard-data.ts';
import { scrapeSource, type MetricsSource } from '../dashboard/metrics-source.ts';
import type { PromSample } from '../dashboard/prometheus-text.ts';
import { aggregateStageMetrics, type StageMetrics } from '../dashboard/stage-metrics.ts';

/**
 * What the terminal view shows at one instant. Counters are cumulative (the view derives rates from
 * two snapshots); `alerts` holds only the alerts that arrived since the previous snapshot.
 */
export interface PipelineSnapshot {
  /** Epoch ms. */
  at: number;
  /** Lines fed into the pipeline so far (the traffic generator's count, or the logserver's input). */
  linesIn: number;
  /** Per stage, summed over instances (see `aggregateStageMetrics`). */
  stages: StageMetrics[];
  /** Batches being collected now; undefined when nothing reports it. */
  openBatches?: number;
  /** Alerts new since the previous snapshot, oldest first. */
  alerts: AlertView[];
}

/**
 * Produces the next snapshot; called by the view on every refresh. `final`: the view's last read,
 * after the pipeline drained: every alert there is comes now (none held back for its detector), and
 * a failed alert read throws instead of waiting for a next refresh that will not come.
 */
export type SnapshotSource = (o?: { final?: boolean }) => Promise<PipelineSnapshot>;

export interface SnapshotSourceOptions {
  /** The workers' metrics (as for the dashboard). */
  metricsSources: readonly MetricsSource[];
  /** ClickHouse access (a started dashboard's `data`); gives alerts and, by default, open batches. */
  data?: DashboardData;
  /**
   * Lines fed so far. Default: records consumed by the logserver stage (a stage whose name holds
   * `logserver`), else by the first stage.
   */
  linesIn?: () => number;
  /**
   * Batches being collected. Default: the latest `fill_levels` count of entry type `open_batches`,
   * summed over stages (a collector that records it); undefined without such rows.
   */
  openBatches?: () => Promise<number | undefined>;
  /** Per scrape. Default 2000 ms. */
  scrapeTimeoutMs?: number;
  /** Only alerts stamped at or after this (epoch ms): the run's own. Default: every alert. */
  alertsSince?: number;
}

/**
 * A {@link SnapshotSource} over the workers' metrics and the monitoring tables: each call scrapes
 * every source (an unreachable one is skipped) and reads the alerts newer than those it returned.
 */
export function pipelineSnapshotSource(opts: SnapshotSourceOptions): SnapshotSource {
  const alerts = opts.data
    ? new AlertCursor(opts.data, 500, {
        ...(opts.alertsSince !== undefined ? { since: opts.alertsSince } : {}),
      })
    : undefined;
  const openBatches =
    opts.openBatches ??
    (opts.data ? fillLevelOpenBatches(opts.data) : () => Promise.resolve<number | undefined>(undefined));
  return async (o) => {
    const results = await Promise.allSettled(
      opts.metricsSources.map((s) => scrapeSource(s, opts.scrapeTimeoutMs ?? 2000)),
    );
    const samples: PromSample[] = results.flatMap((r) => (r.status === 'fulfilled' ? r.value : []));
    const stages = aggregateStageMetrics(samples);
    const [fresh, open] = await Promise.all([
      // A failed read leaves the cursor where it was: the next refresh reads the same alerts again.
      (o?.final ? alerts?.next({ final: true }) : alerts?.next().catch(() => [])) ?? [],
      openBatches().catch(() => undefined),
    ]);
    const logserver = stages.find((s) => s.stage.includes('logserver')) ?? stages[0];
    return {
      at: Date.now(),
      linesIn: opts.linesIn ? opts.linesIn() : (logserver?.recordsIn ?? 0),
      stages,
      ...(open !== undefined ? { openBatches: open } : {}),
      alerts: fresh,
    };
  };
}

function fillLevelOpenBatches(data: DashboardData): () => Promise<number | undefined> {
  return async () => {
    const rows = (await data.currentFill()).filter((r) => r.entryType === 'open_batches');
    return rows.length === 0 ? undefined : rows.reduce((sum, r) => sum + r.n, 0);
  };
}

export interface AlertCursorOptions {
  /** Alerts stamped before this (epoch ms) are never returned: an earlier run's. Default: all. */
  since?: number;
  /**
   * An alert's detector comes from the suspicious batch's row at the detector stage, which the
   * monitoring agent may insert well after the alert's row (another topic, read in other batches).
   * An alert without it (several detectors configured; with one, `alertView` names it) is held back
   * (with the alerts after it, to keep the order) until it has one or the cursor first read it this
   * long ago; default 15000 ms. Counted from the first read, not from the alert's own time: on a
   * loaded machine the alert reaches ClickHouse late too, and its age would use up the grace.
   */
  detectorGraceMs?: number;
  now?: () => number;
}

/** Reads alerts in arrival order, each once, even when several share a millisecond. */
export class AlertCursor {
  #after: number;
  #atBoundary = new Set<string>();
  readonly #graceMs: number;
  readonly #now: () => number;
  /** When each alert held back for its detector was first read. */
  readonly #heldSince = new Map<string, number>();

  constructor(
    private readonly data: Pick<DashboardData, 'alertsAfter'>,
    private readonly pageSize = 500,
    o: AlertCursorOptions = {},
  ) {
    this.#after = o.since ?? 0;
    this.#graceMs = o.detectorGraceMs ?? 15_000;
    this.#now = o.now ?? Date.now;
  }

  /** `final`: nothing is held back for its detector (the last read; see `detectorGraceMs`). */
  async next(o: { final?: boolean } = {}): Promise<AlertView[]> {
    // `after - 1` re-reads the boundary millisecond, whose alerts seen already are filtered; the
    // page grows by them so they never fill it.
    const rows = await this.data.alertsAfter(this.#after - 1, this.pageSize + this.#atBoundary.size);
    const unseen = rows.filter((a) => !(a.time === this.#after && this.#atBoundary.has(alertKey(a))));
    const now = this.#now();
    const waiting = unseen.findIndex((a) => {
      if (a.detector !== '' || o.final) return false;
      const key = alertKey(a);
      const since = this.#heldSince.get(key) ?? now;
      this.#heldSince.set(key, since);
      return now - since < this.#graceMs;
    });
    const fresh = waiting === -1 ? unseen : unseen.slice(0, waiting);
    for (const a of fresh) this.#heldSince.delete(alertKey(a));
    const last = fresh.at(-1);
    if (last) {
      if (last.time !== this.#after) this.#atBoundary = new Set();
      this.#after = last.time;
      for (const a of fresh) if (a.time === last.time) this.#atBoundary.add(alertKey(a));
    }
    return fresh;
  }
}

function alertKey(a: AlertView): string {
  return `${a.suspiciousBatchId}\u0000${a.host}`;
}
