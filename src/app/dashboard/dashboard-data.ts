import { errorText } from '../../errors/error-text.ts';
import { alertView, type AlertView } from './alert-view.ts';
import { num, str, type ClickHouseReader, type Row } from './clickhouse-reader.ts';
import { bucketFor, type DashboardQueries } from './dashboard-queries.ts';
import type { MetricsHistory, MetricsSeries, SourceStatus } from './metrics-history.ts';
import { align, bucketGrid, column, type AlignedSeries } from './series.ts';
import type { SensorMetrics } from './sensor-metrics.ts';
import { byPipelineOrder, type StageMetrics } from './stage-metrics.ts';

export interface Totals {
  linesIn: number;
  linesValid: number;
  linesFailed: number;
  batches: number;
  suspiciousBatches: number;
  alerts: number;
  alertedHosts: number;
}

export interface StageLatency {
  stage: string;
  lines: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Everything the pipeline page shows; a failed query leaves its part empty and names the error. */
export interface PipelineData {
  now: number;
  windowMs: number;
  bucketMs: number;
  totals: Totals | null;
  volume: AlignedSeries | null;
  stageLines: AlignedSeries | null;
  stageP99: AlignedSeries | null;
  latency: StageLatency[] | null;
  fillLevels: AlignedSeries | null;
  currentFill: { stage: string; entryType: string; n: number; at: number }[] | null;
  workerEvents: { stage: string; event: string; n: number; records: number }[] | null;
  metrics: {
    series: MetricsSeries;
    latest: StageMetrics[];
    sensors: SensorMetrics[];
    sources: SourceStatus[];
  } | null;
  errors: string[];
}

export interface HostLine {
  loglineId: string;
  timestamp: number;
  status: string;
  recordType: string;
  subnetId: string;
  fields: Record<string, unknown>;
  stages: Record<string, { t: number; latencyMs: number; status: string }>;
}

export interface HostData {
  host: string;
  stages: string[];
  lines: HostLine[];
  alerts: AlertView[];
  errors: string[];
}

const pipelineStageOrder = (a: string, b: string) => byPipelineOrder(a, b);

/**
 * Keeps the rows of a costly query and runs it again only after four of its own durations, so a
 * slow ClickHouse is not kept busy by the dashboard (a query taking 1 s refreshes every 4 s).
 */
class QueryCache {
  #last: { at: number; tookMs: number; rows: Row[] } | undefined;

  async rows(now: number, run: () => Promise<Row[]>): Promise<Row[]> {
    const last = this.#last;
    if (last && now - last.at < 4 * last.tookMs) return last.rows;
    const started = Date.now();
    const rows = await run();
    this.#last = { at: now, tookMs: Date.now() - started, rows };
    return rows;
  }
}

/** Turns query rows into the pages' JSON. */
export class DashboardData {
  /** The lineage join (lines to stages to alerts) costs most of a refresh. */
  private readonly lineage = new QueryCache();

  constructor(
    private readonly reader: ClickHouseReader,
    private readonly queries: DashboardQueries,
    private readonly metrics: MetricsHistory | undefined,
    private readonly windowMs: number,
    /** The one detector configured, if there is only one (see `alertView`). */
    private readonly onlyDetector = '',
  ) {}

  async pipeline(now = Date.now()): Promise<PipelineData> {
    const bucketMs = bucketFor(this.windowMs);
    const since = now - this.windowMs;
    const w = { since, bucketMs };
    const grid = bucketGrid(since, now, bucketMs);
    const errors: string[] = [];
    const run = async <T>(
      what: string,
      sql: string,
      shape: (rows: Row[]) => T,
      cache?: QueryCache,
    ): Promise<T | null> => {
      try {
        return shape(
          cache ? await cache.rows(now, () => this.reader.rows(sql)) : await this.reader.rows(sql),
        );
      } catch (e) {
        errors.push(`${what}: ${errorText(e)}`);
        return null;
      }
    };
    const q = this.queries;
    // One at a time: ClickHouse on a small machine answers a sequence faster than a burst.
    const totals = await run('totals', q.totals(), (rows) => totalsOf(rows[0] ?? {}));
    const volume = await run('volume', q.volume(w), (rows) => align(rows, grid, column('series'), 'n', 0));
    const flow = await run(
      'stage flow and latency',
      q.stageFlowAndLatency(w),
      (rows) => flowOf(rows, grid),
      this.lineage,
    );
    const fillLevels = await run('fill levels', q.fillLevels(w), (rows) =>
      align(rows, grid, (r) => `${str(r.stage)} ${str(r.entry_type)}`, 'n', null, pipelineStageOrder),
    );
    const currentFill = await run('current fill levels', q.currentFillLevels(), (rows) =>
      rows
        .map((r) => ({ stage: str(r.stage), entryType: str(r.entry_type), n: num(r.n), at: num(r.at) }))
        .sort((a, b) => pipelineStageOrder(a.stage, b.stage)),
    );
    const workerEvents = await run('worker batches', q.workerEvents(since), (rows) =>
      rows
        .map((r) => ({ stage: str(r.stage), event: str(r.event), n: num(r.n), records: num(r.records) }))
        .sort((a, b) => pipelineStageOrder(a.stage, b.stage)),
    );
    return {
      now,
      windowMs: this.windowMs,
      bucketMs,
      totals,
      volume,
      stageLines: flow?.lines ?? null,
      stageP99: flow?.p99 ?? null,
      latency: flow?.latency ?? null,
      fillLevels,
      currentFill,
      workerEvents,
      metrics: this.metrics
        ? {
            series: this.metrics.series(),
            latest: this.metrics.latest(),
            sensors: this.metrics.latestSensors(),
            sources: this.metrics.status(),
          }
        : null,
      errors,
    };
  }

  async alerts(opts: { host?: string; since?: number; limit: number }): Promise<AlertView[]> {
    return (
      await this.reader.rows(this.queries.alerts(opts), opts.host === undefined ? {} : { host: opts.host })
    ).map((r) => alertView(r, this.onlyDetector));
  }

  async alertsAfter(after: number, limit: number): Promise<AlertView[]> {
    return (await this.reader.rows(this.queries.alertsAfter(after, limit))).map((r) =>
      alertView(r, this.onlyDetector),
    );
  }

  /** Totals since the tables were created, or of the rows stamped at or after `since` (epoch ms). */
  async totals(since?: number): Promise<Totals> {
    return totalsOf((await this.reader.rows(this.queries.totals(since)))[0] ?? {});
  }

  async currentFill(): Promise<{ stage: string; entryType: string; n: number }[]> {
    return (await this.reader.rows(this.queries.currentFillLevels())).map((r) => ({
      stage: str(r.stage),
      entryType: str(r.entry_type),
      n: num(r.n),
    }));
  }

  async hosts(limit: number): Promise<{ host: string; lines: number; alerts: number }[]> {
    return (await this.reader.rows(this.queries.hosts(limit))).map((r) => ({
      host: str(r.client_ip),
      lines: num(r.lines),
      alerts: num(r.alerts),
    }));
  }

  async host(host: string, limit: number): Promise<HostData> {
    const errors: string[] = [];
    const attempt = async <T>(what: string, work: () => Promise<T>, empty: T): Promise<T> => {
      try {
        return await work();
      } catch (e) {
        errors.push(`${what}: ${errorText(e)}`);
        return empty;
      }
    };
    const lineRows = await attempt(
      'lines',
      () => this.reader.rows(this.queries.hostLineRows(limit), { host }),
      [],
    );
    const stageRows = await attempt(
      'stages',
      () => this.reader.rows(this.queries.hostLineStages(limit), { host }),
      [],
    );
    const alerts = await attempt('alerts', () => this.alerts({ host, limit: 50 }), []);
    const lines = new Map<string, HostLine>(
      lineRows.map((r) => [
        str(r.logline_id),
        {
          loglineId: str(r.logline_id),
          timestamp: num(r.timestamp),
          status: str(r.status),
          recordType: str(r.record_type),
          subnetId: str(r.subnet_id),
          fields: parseFields(str(r.additional_fields)),
          stages: {},
        },
      ]),
    );
    const stages = new Set<string>();
    for (const r of stageRows) {
      const line = lines.get(str(r.logline_id));
      if (!line) continue;
      const stage = str(r.stage);
      stages.add(stage);
      line.stages[stage] = { t: num(r.t), latencyMs: num(r.latency_ms), status: str(r.status) };
    }
    return { host, stages: [...stages].sort(pipelineStageOrder), lines: [...lines.values()], alerts, errors };
  }
}

/** Splits the one-pass rows: buckets (`bucket` >= 0) for the charts, `bucket` = -1 for the table. */
function flowOf(
  rows: readonly Row[],
  grid: readonly number[],
): { lines: AlignedSeries; p99: AlignedSeries; latency: StageLatency[] } {
  const buckets = rows.filter((r) => num(r.bucket) !== -1).map((r) => ({ ...r, t: r.bucket }));
  return {
    lines: align(buckets, grid, column('stage'), 'lines', 0, pipelineStageOrder),
    p99: align(buckets, grid, column('stage'), 'p99_ms', null, pipelineStageOrder),
    latency: rows
      .filter((r) => num(r.bucket) === -1)
      .map((r) => ({
        stage: str(r.stage),
        lines: num(r.lines),
        p50Ms: num(r.p50_ms),
        p99Ms: num(r.p99_ms),
        maxMs: num(r.max_ms),
      }))
      .sort((a, b) => pipelineStageOrder(a.stage, b.stage)),
  };
}

function totalsOf(r: Row): Totals {
  return {
    linesIn: num(r.lines_in),
    linesValid: num(r.lines_valid),
    linesFailed: num(r.lines_failed),
    batches: num(r.batches),
    suspiciousBatches: num(r.suspicious_batches),
    alerts: num(r.alerts),
    alertedHosts: num(r.alerted_hosts),
  };
}

function parseFields(text: string): Record<string, unknown> {
  if (text === '') return {};
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : { value: v };
  } catch {
    return { value: text };
  }
}
