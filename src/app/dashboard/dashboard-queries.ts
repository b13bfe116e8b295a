import { dedupViewName, qualified, type TableName } from '../../monitoring/tables.ts';

/**
 * The dashboard's ClickHouse queries. They run on ClickHouse 18.16 (Debian's package) as on current
 * servers, so: one JOIN per SELECT (nested subqueries for
 * more), `JOIN ... USING` (no `ON`), epoch-millisecond Int64 timestamps bucketed with `intDiv`.
 *
 * Replays of the monitoring agent may leave duplicate rows until a merge (see
 * src/monitoring/queries.ts). Counts read the `_dedup` views; `min`, `max`, `any` and
 * `uniqExact` give the same answer with or without duplicates, so those read the plain tables and
 * skip the cost of FINAL.
 *
 * A value from a request (the host filter) never becomes SQL text here: it is the placeholder
 * {@link HOST_PARAM}, bound by ClickHouseConnection.query (server-side where the server can).
 */
export interface Window {
  /** Start of the window, epoch ms. */
  since: SqlInt;
  /** Bucket width of time series, ms. */
  bucketMs: SqlInt;
}

/**
 * An integer, or a SQL expression that yields one: the Grafana dashboards reuse these queries with
 * the data source's time macros in place of numbers (see scripts/grafana-dashboards.ts).
 */
export type SqlInt = number | string;

function sql(x: SqlInt): string {
  return typeof x === 'number' ? String(Math.trunc(x)) : `(${x})`;
}

/** A bucket width that gives about 180 points over the window, in whole seconds. */
export function bucketFor(windowMs: number): number {
  return Math.max(1000, Math.round(windowMs / 180 / 1000) * 1000);
}

/** The placeholder of the host filter; its value goes in the query's params as `host`. */
export const HOST_PARAM = '{host:String}';

export class DashboardQueries {
  constructor(private readonly database: string) {}

  private table(name: TableName): string {
    return qualified(this.database, name);
  }
  private dedup(name: TableName): string {
    return qualified(this.database, dedupViewName(name));
  }

  /**
   * Totals since the tables were created, or of the rows stamped at or after `since` (one run of
   * `hamstring up --demo` among earlier ones in the same tables): one row.
   */
  totals(since?: SqlInt): string {
    const after = (col: string) => (since === undefined ? '' : ` WHERE ${col} >= ${sql(since)}`);
    const count = (t: TableName, col: string) => `(SELECT count() FROM ${this.dedup(t)}${after(col)})`;
    const uniq = (what: string, t: TableName, col: string) =>
      `(SELECT uniqExact(${what}) FROM ${this.table(t)}${after(col)})`;
    return [
      'SELECT',
      `  ${count('server_logs', 'timestamp_in')} AS lines_in,`,
      `  ${count('loglines', 'timestamp')} AS lines_valid,`,
      `  ${count('failed_loglines', 'timestamp_failed')} AS lines_failed,`,
      `  ${uniq('batch_id', 'batch_timestamps', 'timestamp')} AS batches,`,
      `  ${uniq('suspicious_batch_id', 'suspicious_batch_timestamps', 'timestamp')} AS suspicious_batches,`,
      `  ${count('alerts', 'alert_timestamp')} AS alerts,`,
      `  ${uniq('client_ip', 'alerts', 'alert_timestamp')} AS alerted_hosts`,
    ].join('\n');
  }

  /** Lines in, failed lines and alerts per bucket: rows `{series, t, n}`. */
  volume(w: Window): string {
    const series = (name: string, t: TableName, col: string) =>
      `SELECT '${name}' AS series, intDiv(${col}, ${sql(w.bucketMs)}) * ${sql(w.bucketMs)} AS t, count() AS n FROM ${this.dedup(t)} WHERE ${col} >= ${sql(w.since)} GROUP BY t`;
    return [
      series('lines in', 'server_logs', 'timestamp_in'),
      series('failed', 'failed_loglines', 'timestamp_failed'),
      series('alerts', 'alerts', 'alert_timestamp'),
    ].join('\nUNION ALL\n');
  }

  /**
   * When each line reached each stage: rows `{logline_id, stage, t}` (first time, epoch ms).
   * Line-level stages record `logline_timestamps`; batch stages record their batch, reached through
   * `logline_to_batches`; suspicious batches hold one host's lines of a batch, so they join on
   * (batch_id, client_ip); an alert reaches the lines of its suspicious batch.
   * `lines` restricts the lines (a SELECT of logline_id); `timed` says it adds nothing to the
   * `since` filter, so tables with a time column skip the (costly) set lookup.
   */
  private stageTimes(lines: string, since: SqlInt, timed: boolean): string {
    const andLines = timed ? '' : ` AND logline_id IN (${lines})`;
    const lineBatches = `SELECT logline_id, batch_id FROM ${this.table('logline_to_batches')} WHERE logline_id IN (${lines})`;
    // Only lines of batches that yielded a suspicious batch need their host: few, usually.
    const suspiciousBatchIds = `SELECT batch_id FROM ${this.table('suspicious_batches_to_batch')}`;
    const suspiciousLines = `SELECT logline_id FROM ${this.table('logline_to_batches')} WHERE batch_id IN (${suspiciousBatchIds})`;
    const lineBatchHosts = [
      `SELECT logline_id, batch_id, client_ip FROM (${lineBatches} AND batch_id IN (${suspiciousBatchIds}))`,
      `ALL INNER JOIN (SELECT logline_id, any(client_ip) AS client_ip FROM ${this.table('loglines')} WHERE logline_id IN (${suspiciousLines})${andLines} GROUP BY logline_id) USING logline_id`,
    ].join(' ');
    const suspiciousAndAlertTimes = [
      `SELECT suspicious_batch_id, stage, min(timestamp) AS t, any(client_ip) AS client_ip FROM ${this.table('suspicious_batch_timestamps')} WHERE timestamp >= ${sql(since)} GROUP BY suspicious_batch_id, stage`,
      `SELECT suspicious_batch_id, 'alert' AS stage, min(alert_timestamp) AS t, any(client_ip) AS client_ip FROM ${this.table('alerts')} WHERE alert_timestamp >= ${sql(since)} GROUP BY suspicious_batch_id`,
    ].join(' UNION ALL ');
    const suspiciousTimes = [
      `SELECT batch_id, client_ip, stage, t FROM (SELECT suspicious_batch_id, any(batch_id) AS batch_id FROM ${this.table('suspicious_batches_to_batch')} GROUP BY suspicious_batch_id)`,
      `ALL INNER JOIN (${suspiciousAndAlertTimes}) USING suspicious_batch_id`,
    ].join(' ');
    return [
      `SELECT logline_id, stage, timestamp AS t FROM ${this.table('logline_timestamps')} WHERE timestamp >= ${sql(since)}${andLines}`,
      `SELECT logline_id, stage, t FROM (${lineBatches}) ALL INNER JOIN (SELECT batch_id, stage, min(timestamp) AS t FROM ${this.table('batch_timestamps')} WHERE timestamp >= ${sql(since)} GROUP BY batch_id, stage) USING batch_id`,
      `SELECT logline_id, stage, t FROM (${lineBatchHosts}) ALL INNER JOIN (${suspiciousTimes}) USING batch_id, client_ip`,
    ].join('\nUNION ALL\n');
  }

  /** A line's arrival: the first time any stage recorded it (the collector, when it read the line). */
  private lineIn(lines: string, since: SqlInt, timed: boolean): string {
    const andLines = timed ? '' : ` AND logline_id IN (${lines})`;
    return `SELECT logline_id, min(timestamp) AS line_in FROM ${this.table('logline_timestamps')} WHERE timestamp >= ${sql(since)}${andLines} GROUP BY logline_id`;
  }

  private linesSince(since: SqlInt): string {
    return `SELECT logline_id FROM ${this.table('logline_timestamps')} WHERE timestamp >= ${sql(since)}`;
  }

  /**
   * Per line and stage: first arrival and latency since line in. Rows `{logline_id, stage, t,
   * latency_ms}`. Without `lines`: every line that came in since `since`.
   */
  private lineStageLatency(since: SqlInt, lines?: string): string {
    const timed = lines === undefined;
    const set = lines ?? this.linesSince(since);
    return [
      'SELECT logline_id, stage, t, t - line_in AS latency_ms FROM',
      `(SELECT logline_id, stage, min(t) AS t FROM (${this.stageTimes(set, since, timed)}) GROUP BY logline_id, stage)`,
      `ALL INNER JOIN (${this.lineIn(set, since, timed)}) USING logline_id`,
    ].join('\n');
  }

  /**
   * One pass for the pipeline page: per stage and bucket, and (`bucket` = -1) per stage over the whole
   * window, the lines that reached the stage and their latency since line in. Rows `{stage, bucket,
   * lines, p50_ms, p99_ms, max_ms}`. The lineage join is the costly part, so it runs once and
   * ARRAY JOIN counts each line in its bucket and in the total.
   */
  stageFlowAndLatency(w: Window): string {
    return [
      'SELECT stage, bucket, count() AS lines, quantile(0.5)(latency_ms) AS p50_ms,',
      '  quantile(0.99)(latency_ms) AS p99_ms, max(latency_ms) AS max_ms',
      `FROM (${this.lineStageLatency(w.since)})`,
      `ARRAY JOIN [intDiv(t, ${sql(w.bucketMs)}) * ${sql(w.bucketMs)}, -1] AS bucket`,
      'GROUP BY stage, bucket ORDER BY stage, bucket',
    ].join('\n');
  }

  /**
   * Lines reaching each stage per bucket and their latency since line in (p50, p99): rows
   * `{stage, t, lines, p50_ms, p99_ms}`. Stage `alert` is the alert that covered the line.
   */
  stageFlow(w: Window): string {
    return [
      `SELECT stage, intDiv(t, ${sql(w.bucketMs)}) * ${sql(w.bucketMs)} AS t, count() AS lines,`,
      '  quantile(0.5)(latency_ms) AS p50_ms, quantile(0.99)(latency_ms) AS p99_ms',
      `FROM (${this.lineStageLatency(w.since)})`,
      'GROUP BY stage, t ORDER BY stage, t',
    ].join('\n');
  }

  /** Latency since line in per stage over the whole window: rows `{stage, lines, p50_ms, p99_ms, max_ms}`. */
  stageLatency(since: SqlInt): string {
    return [
      'SELECT stage, count() AS lines, quantile(0.5)(latency_ms) AS p50_ms,',
      '  quantile(0.99)(latency_ms) AS p99_ms, max(latency_ms) AS max_ms',
      `FROM (${this.lineStageLatency(since)})`,
      'GROUP BY stage',
    ].join('\n');
  }

  /** Fill levels per stage and entry type, the bucket's maximum: rows `{stage, entry_type, t, n}`. */
  fillLevels(w: Window): string {
    return [
      `SELECT stage, entry_type, intDiv(timestamp, ${sql(w.bucketMs)}) * ${sql(w.bucketMs)} AS t, max(entry_count) AS n`,
      `FROM ${this.table('fill_levels')} WHERE timestamp >= ${sql(w.since)}`,
      'GROUP BY stage, entry_type, t ORDER BY t',
    ].join('\n');
  }

  /** The latest fill level per stage and entry type: rows `{stage, entry_type, n, at}`. */
  currentFillLevels(): string {
    return [
      'SELECT stage, entry_type, argMax(entry_count, timestamp) AS n, max(timestamp) AS at',
      `FROM ${this.table('fill_levels')} GROUP BY stage, entry_type ORDER BY stage, entry_type`,
    ].join('\n');
  }

  /** The runtime's batch events per stage in the window: rows `{stage, event, n, records}`. */
  workerEvents(since: SqlInt): string {
    return [
      'SELECT stage, event, count() AS n, sum(records) AS records',
      `FROM ${this.dedup('worker_batches')} WHERE timestamp >= ${sql(since)}`,
      'GROUP BY stage, event ORDER BY stage, event',
    ].join('\n');
  }

  /**
   * The latest alerts, newest first, optionally of one host: rows `{client_ip, alert_timestamp,
   * suspicious_batch_id, overall_score, domain_names, result, detector}`, optionally only those
   * stamped at or after `since` (epoch ms). The detector is the
   * instance that recorded the suspicious batch at a detector stage (alerts carry no detector column).
   */
  alerts(opts: { host?: string; since?: number; limit: number }): string {
    const conditions = [
      ...(opts.host === undefined ? [] : [`client_ip = ${HOST_PARAM}`]),
      ...(opts.since === undefined ? [] : [`alert_timestamp >= ${Math.trunc(opts.since)}`]),
    ];
    const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
    return [
      'SELECT client_ip, alert_timestamp, suspicious_batch_id, overall_score, domain_names, result, detector FROM',
      `(SELECT client_ip, alert_timestamp, suspicious_batch_id, overall_score, domain_names, result FROM ${this.dedup('alerts')} ${where} ORDER BY alert_timestamp DESC LIMIT ${Math.trunc(opts.limit)})`,
      `ANY LEFT JOIN (SELECT suspicious_batch_id, any(instance_name) AS detector FROM ${this.table('suspicious_batch_timestamps')} WHERE positionCaseInsensitive(stage, 'detector') > 0 GROUP BY suspicious_batch_id) USING suspicious_batch_id`,
      'ORDER BY alert_timestamp DESC',
    ].join('\n');
  }

  /** Alerts newer than `after` (epoch ms), oldest first: feeds the terminal view. */
  alertsAfter(after: number, limit: number): string {
    return [
      'SELECT client_ip, alert_timestamp, suspicious_batch_id, overall_score, domain_names, result, detector FROM',
      `(SELECT client_ip, alert_timestamp, suspicious_batch_id, overall_score, domain_names, result FROM ${this.dedup('alerts')} WHERE alert_timestamp > ${Math.trunc(after)} ORDER BY alert_timestamp LIMIT ${Math.trunc(limit)})`,
      `ANY LEFT JOIN (SELECT suspicious_batch_id, any(instance_name) AS detector FROM ${this.table('suspicious_batch_timestamps')} WHERE positionCaseInsensitive(stage, 'detector') > 0 GROUP BY suspicious_batch_id) USING suspicious_batch_id`,
      'ORDER BY alert_timestamp',
    ].join('\n');
  }

  /** Hosts seen most, for the host page's picker: rows `{client_ip, lines, alerts}`. */
  hosts(limit: number): string {
    return [
      'SELECT client_ip, lines, alerts FROM',
      `(SELECT client_ip, uniqExact(logline_id) AS lines FROM ${this.table('loglines')} GROUP BY client_ip)`,
      `ANY LEFT JOIN (SELECT client_ip, uniqExact(suspicious_batch_id) AS alerts FROM ${this.table('alerts')} GROUP BY client_ip) USING client_ip`,
      `ORDER BY alerts DESC, lines DESC LIMIT ${Math.trunc(limit)}`,
    ].join('\n');
  }

  private hostLines(limit: number): string {
    return `SELECT logline_id FROM (SELECT logline_id, max(timestamp) AS ts FROM ${this.table('loglines')} WHERE client_ip = ${HOST_PARAM} GROUP BY logline_id ORDER BY ts DESC LIMIT ${Math.trunc(limit)})`;
  }

  /** One host's ({@link HOST_PARAM}) latest lines: rows `{logline_id, timestamp, status, record_type, subnet_id, additional_fields}`. */
  hostLineRows(limit: number): string {
    return [
      'SELECT logline_id, any(timestamp) AS timestamp, any(status) AS status, any(record_type) AS record_type,',
      '  any(subnet_id) AS subnet_id, any(additional_fields) AS additional_fields',
      `FROM ${this.table('loglines')} WHERE logline_id IN (${this.hostLines(limit)})`,
      'GROUP BY logline_id ORDER BY timestamp DESC',
    ].join('\n');
  }

  /**
   * Where each of the host's ({@link HOST_PARAM}) latest lines went: rows `{logline_id, stage, t, latency_ms, status}`
   * (status: the line's last status at a line-level stage, empty for batch stages).
   */
  hostLineStages(limit: number): string {
    const lines = this.hostLines(limit);
    return [
      'SELECT logline_id, stage, t, latency_ms, status FROM',
      `(${this.lineStageLatency(0, lines)})`,
      `ANY LEFT JOIN (SELECT logline_id, stage, argMax(status, timestamp) AS status FROM ${this.table('logline_timestamps')} WHERE logline_id IN (${lines}) GROUP BY logline_id, stage) USING logline_id, stage`,
      'ORDER BY logline_id, t',
    ].join('\n');
  }
}
