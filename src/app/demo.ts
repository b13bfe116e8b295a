import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { pino, type Logger } from 'pino';
import { secretSafeOptions } from '../observability/logger.ts';
import type { HamstringConfig } from '../config/index.ts';
import type { HostTruth } from '../traffic/index.ts';
import { ClickHouseReader } from './dashboard/clickhouse-reader.ts';
import { DashboardData } from './dashboard/dashboard-data.ts';
import { DashboardQueries } from './dashboard/dashboard-queries.ts';
import {
  dashboardOptionsFromConfig,
  startDashboard,
  workerMetricsSource,
  type Dashboard,
  type MetricsSource,
} from './dashboard/index.ts';
import type { RunningPipeline } from './pipeline.ts';
import {
  collectRunSummary,
  formatSummary,
  pipelineSnapshotSource,
  startTerminalView,
  type GroundTruth,
  type TerminalView,
  type ViewOutput,
} from './terminal/index.ts';
import type { TrafficFeed } from './traffic-feed.ts';

/**
 * JSON logs to a file: the demo's terminal belongs to the live view, and a log line in the middle
 * of it would tear the frame.
 */
export function fileLogger(path: string, level: string): Logger {
  mkdirSync(dirname(path), { recursive: true });
  return pino(
    { level, base: { pid: process.pid }, ...secretSafeOptions() },
    pino.destination({ dest: path, sync: false }),
  );
}

/**
 * The hosts a run should find: every DGA-infected host, and the tunnelling host when a Domainator
 * detector is configured (nothing else looks for tunnels).
 */
export function groundTruth(config: HamstringConfig, truth: readonly HostTruth[]): GroundTruth {
  const tunnels = config.pipeline.data_analysis.some((d) => d.detector_class_name === 'DomainatorDetector');
  const infected = new Map<string, string>();
  for (const host of truth)
    if (host.role === 'dga') infected.set(host.ip, host.family);
    else if (host.role === 'tunnel' && tunnels) infected.set(host.ip, `tunnel ${host.domain}`);
  return { infected };
}

/** The dashboard and the terminal view of a running demo. */
export interface DemoViews {
  /** Undefined when `dashboard.enabled` is false (the view and the summary still read ClickHouse). */
  readonly dashboard: Dashboard | undefined;
  /** Stops the view, then returns the end-of-run summary against the generator's truth. */
  finish(): Promise<string>;
  close(): Promise<void>;
}

/**
 * Serves the dashboard over the monitoring tables and the in-process workers' metrics, and shows
 * the terminal view (live on a terminal, log lines otherwise) fed by the traffic's count of lines.
 */
export async function startDemoViews(o: {
  config: HamstringConfig;
  pipeline: RunningPipeline;
  feed: TrafficFeed;
  log: Logger;
  out?: ViewOutput;
  /**
   * When this run began (epoch ms; default now): the view and the summary count only alerts and
   * batches from then on, as the tables also hold earlier runs.
   */
  since?: number;
}): Promise<DemoViews> {
  const since = o.since ?? Date.now();
  const metricsSources: MetricsSource[] = [
    ...o.pipeline.stages.workers.map((w) => workerMetricsSource(w)),
    ...o.pipeline.sensors.map((s) => s.registry),
    ...(o.feed.metrics ?? []),
  ];
  const options = dashboardOptionsFromConfig(o.config, { log: o.log, metricsSources });
  const dashboard = o.config.dashboard.enabled ? await startDashboard(options) : undefined;
  const reader = dashboard
    ? undefined
    : new ClickHouseReader([options.clickhouse, ...(options.clickhouseReplicas ?? [])]);
  const data =
    dashboard?.data ??
    new DashboardData(
      reader!,
      new DashboardQueries(options.clickhouse.database),
      undefined,
      options.windowMs ?? 15 * 60_000,
      options.onlyDetector,
    );
  let view: TerminalView | undefined = startTerminalView({
    source: pipelineSnapshotSource({
      metricsSources,
      data,
      linesIn: () => o.feed.sent(),
      alertsSince: since,
    }),
    ...(o.out ? { out: o.out } : {}),
    onError: (e) =>
      o.log.warn({ err: e instanceof Error ? e.message : String(e) }, 'terminal view: snapshot failed'),
  });
  let closed = false;
  return {
    dashboard,
    async finish() {
      await view?.stop();
      view = undefined;
      const summary = await collectRunSummary({
        data,
        truth: groundTruth(o.config, o.feed.truth),
        linesIn: o.feed.sent(),
        since,
      });
      return formatSummary(summary);
    },
    async close() {
      if (closed) return;
      closed = true;
      await view?.stop();
      await dashboard?.close();
      await reader?.close();
    },
  };
}
