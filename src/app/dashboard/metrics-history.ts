import type { Logger } from '../../observability/logger.ts';
import { scrapeSource, sourceLabel, type MetricsSource } from './metrics-source.ts';
import type { PromSample } from './prometheus-text.ts';
import { aggregateSensorMetrics, type SensorMetrics } from './sensor-metrics.ts';
import { aggregateStageMetrics, byPipelineOrder, type StageMetrics } from './stage-metrics.ts';

/** One sampling instant: every stage's totals then, and every sensor's counters. */
export interface MetricsPoint {
  at: number;
  stages: StageMetrics[];
  sensors: SensorMetrics[];
}

/** Per-stage series over the kept window, rates per second between consecutive points. */
export interface StageSeries {
  stage: string;
  recordsInPerSec: (number | null)[];
  commitsPerSec: (number | null)[];
  abortsPerSec: (number | null)[];
  recoveriesPerSec: (number | null)[];
  lag: (number | null)[];
}

export interface MetricsSeries {
  /** Sample times, epoch seconds (uPlot's x unit). */
  t: number[];
  stages: StageSeries[];
}

export interface SourceStatus {
  source: string;
  ok: boolean;
  error?: string;
}

export interface MetricsHistoryOptions {
  sources: readonly MetricsSource[];
  /** Sent as `Authorization: Bearer` to `/metrics` URLs (workers whose health servers require it). */
  accessToken?: string;
  intervalMs: number;
  windowMs: number;
  log: Logger;
  /** Per-source scrape bound; default the interval. */
  scrapeTimeoutMs?: number;
}

/**
 * Samples the workers' metrics every interval and keeps the window. Counters are cumulative per
 * process, so rates come from differences of consecutive samples; a counter that went down means a
 * worker restarted with a fresh registry, and its new total is then the increase.
 */
export class MetricsHistory {
  readonly #points: MetricsPoint[] = [];
  #status: SourceStatus[] = [];
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<void> | undefined;

  constructor(private readonly opts: MetricsHistoryOptions) {}

  start(): void {
    if (this.#timer || this.opts.sources.length === 0) return;
    const tick = () => {
      // A slow source must not pile up scrapes: skip a tick while the last one runs.
      this.#inFlight ??= this.sample().finally(() => (this.#inFlight = undefined));
    };
    tick();
    this.#timer = setInterval(tick, this.opts.intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#inFlight;
  }

  /** Scrapes every source once and appends a point (also used by tests and on demand). */
  async sample(now = Date.now()): Promise<void> {
    const timeout = this.opts.scrapeTimeoutMs ?? this.opts.intervalMs;
    const results = await Promise.allSettled(
      this.opts.sources.map((s) => scrapeSource(s, timeout, this.opts.accessToken)),
    );
    const samples: PromSample[] = [];
    this.#status = results.map((r, i) => {
      const source = sourceLabel(this.opts.sources[i]!, i);
      if (r.status === 'fulfilled') {
        samples.push(...r.value);
        return { source, ok: true };
      }
      const error = r.reason instanceof Error ? r.reason.message : String(r.reason);
      this.opts.log.debug({ source, error }, 'dashboard: metrics scrape failed');
      return { source, ok: false, error };
    });
    this.#points.push({
      at: now,
      stages: aggregateStageMetrics(samples),
      sensors: aggregateSensorMetrics(samples),
    });
    while (this.#points.length > 0 && this.#points[0]!.at < now - this.opts.windowMs) this.#points.shift();
  }

  latest(): StageMetrics[] {
    return this.#points.at(-1)?.stages ?? [];
  }

  /** The sensors' counters at the last sample. */
  latestSensors(): SensorMetrics[] {
    return this.#points.at(-1)?.sensors ?? [];
  }

  status(): SourceStatus[] {
    return this.#status;
  }

  series(): MetricsSeries {
    return seriesOf(this.#points);
  }
}

/** Rates and gauges per stage, aligned on the points' times (null where a stage did not report). */
export function seriesOf(points: readonly MetricsPoint[]): MetricsSeries {
  const names = [...new Set(points.flatMap((p) => p.stages.map((s) => s.stage)))].sort(byPipelineOrder);
  const stages = names.map((stage): StageSeries => {
    const at = points.map((p) => p.stages.find((s) => s.stage === stage));
    const rate = (pick: (m: StageMetrics) => number) =>
      at.map((cur, i) => {
        const prev = i > 0 ? at[i - 1] : undefined;
        if (!cur || !prev) return null;
        const dt = (points[i]!.at - points[i - 1]!.at) / 1000;
        if (dt <= 0) return null;
        const delta = pick(cur) - pick(prev);
        return (delta >= 0 ? delta : pick(cur)) / dt;
      });
    return {
      stage,
      recordsInPerSec: rate((m) => m.recordsIn),
      commitsPerSec: rate((m) => m.commits),
      abortsPerSec: rate((m) => m.aborts),
      recoveriesPerSec: rate((m) => m.recoveries),
      lag: at.map((m) => m?.lag ?? null),
    };
  });
  return { t: points.map((p) => p.at / 1000), stages };
}
