/**
 * Writes the Grafana dashboards in dev/grafana/ (`npm run grafana:dashboards`). The ClickHouse
 * panels run the web dashboard's own queries (src/app/dashboard/dashboard-queries.ts) with the
 * grafana-clickhouse-datasource macros in place of the window, so both show the same numbers; the
 * Prometheus panels read the workers' `hamstring_worker_*` metrics. A test checks that the committed
 * files equal this output and runs every ClickHouse query against a real server.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DashboardQueries, HOST_PARAM } from '../src/app/dashboard/dashboard-queries.ts';

const DB_MARK = 'hamstring_grafana_database';
const CH = { type: 'grafana-clickhouse-datasource', uid: '${clickhouse}' };
const PROM = { type: 'prometheus', uid: '${prometheus}' };

/** Epoch-ms bounds and bucket width of the panel's time range, as SQL (Int64 columns hold epoch ms). */
export const FROM_MS = 'toUnixTimestamp($__fromTime) * 1000';
export const TO_MS = 'toUnixTimestamp($__toTime) * 1000';
const BUCKET_MS = '$__interval_s * 1000';
const W = { since: FROM_MS, bucketMs: BUCKET_MS };

const q = new DashboardQueries(DB_MARK);

/** Grafana fills its `host` variable (a picker of known client IPs) in as a quoted literal. */
function grafanaHost(sql: string): string {
  return sql.replaceAll(HOST_PARAM, "'${host}'");
}
const withDb = (sql: string) => sql.replaceAll(DB_MARK, '${database}');
const time = (col: string) => `toDateTime(intDiv(${col}, 1000)) AS time`;

interface Target {
  refId: string;
  datasource: typeof CH | typeof PROM;
  [key: string]: unknown;
}

function chTarget(rawSql: string, format: 'timeseries' | 'table', refId = 'A'): Target {
  // format: 0 time series, 1 table (the data source's Format enum).
  return {
    refId,
    datasource: CH,
    editorType: 'sql',
    queryType: format === 'timeseries' ? 'timeseries' : 'table',
    format: format === 'timeseries' ? 0 : 1,
    rawSql: withDb(rawSql),
  };
}

function promTarget(expr: string, legendFormat: string, refId = 'A'): Target {
  return { refId, datasource: PROM, expr, legendFormat, range: true };
}

let nextId = 1;
function panel(
  type: 'timeseries' | 'table' | 'stat',
  title: string,
  gridPos: { x: number; y: number; w: number; h: number },
  targets: Target[],
  extra: { unit?: string; description?: string } = {},
): Record<string, unknown> {
  return {
    id: nextId++,
    type,
    title,
    ...(extra.description ? { description: extra.description } : {}),
    gridPos,
    datasource: targets[0]!.datasource,
    targets,
    fieldConfig: { defaults: extra.unit ? { unit: extra.unit } : {}, overrides: [] },
    options: type === 'stat' ? { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false } } : {},
  };
}

const templating = (extra: Record<string, unknown>[] = []) => ({
  list: [
    { name: 'clickhouse', label: 'ClickHouse', type: 'datasource', query: 'grafana-clickhouse-datasource' },
    { name: 'prometheus', label: 'Prometheus', type: 'datasource', query: 'prometheus' },
    {
      name: 'database',
      label: 'Database',
      type: 'textbox',
      query: 'default',
      current: { text: 'default', value: 'default' },
    },
    ...extra,
  ],
});

function dashboard(
  uid: string,
  title: string,
  panels: Record<string, unknown>[],
  vars: Record<string, unknown>[] = [],
) {
  return {
    uid,
    title,
    tags: ['hamstring'],
    timezone: 'browser',
    schemaVersion: 39,
    refresh: '5s',
    time: { from: 'now-15m', to: 'now' },
    templating: templating(vars),
    panels,
  };
}

const upTo = (inner: string, cols: string) =>
  `SELECT ${cols} FROM (${inner}) WHERE t <= ${TO_MS} ORDER BY time`;

function pipeline() {
  nextId = 1;
  const rate = (metric: string) => `sum by (stage) (rate(${metric}[$__rate_interval]))`;
  return dashboard('hamstring-pipeline', 'HAMSTRING pipeline', [
    panel('stat', 'Totals', { x: 0, y: 0, w: 24, h: 4 }, [chTarget(q.totals(), 'table')]),
    panel('timeseries', 'Lines in, failed lines and alerts per second', { x: 0, y: 4, w: 12, h: 8 }, [
      chTarget(upTo(q.volume(W), `${time('t')}, series, n / $__interval_s AS per_second`), 'timeseries'),
    ]),
    panel('timeseries', 'Lines reaching each stage per second', { x: 12, y: 4, w: 12, h: 8 }, [
      chTarget(
        upTo(q.stageFlow(W), `${time('t')}, stage, lines / $__interval_s AS lines_per_second`),
        'timeseries',
      ),
    ]),
    panel(
      'timeseries',
      'Latency from line in to each stage and to the alert, p99',
      { x: 0, y: 12, w: 12, h: 8 },
      [chTarget(upTo(q.stageFlow(W), `${time('t')}, stage, p99_ms / 1000 AS p99`), 'timeseries')],
      { unit: 's' },
    ),
    panel('table', 'Latency from line in, over the time range', { x: 12, y: 12, w: 12, h: 8 }, [
      chTarget(q.stageLatency(FROM_MS), 'table'),
    ]),
    panel('timeseries', 'Fill levels', { x: 0, y: 20, w: 12, h: 8 }, [
      chTarget(
        upTo(q.fillLevels(W), `${time('t')}, concat(stage, ' ', entry_type) AS series, n`),
        'timeseries',
      ),
    ]),
    panel('table', 'Batch events per stage (worker_batches)', { x: 12, y: 20, w: 12, h: 8 }, [
      chTarget(q.workerEvents(FROM_MS), 'table'),
    ]),
    panel('timeseries', 'Records consumed per second, per stage', { x: 0, y: 28, w: 12, h: 8 }, [
      promTarget(
        `sum by (stage) (rate(hamstring_worker_records_total{direction="in"}[$__rate_interval]))`,
        '{{stage}}',
      ),
    ]),
    panel('timeseries', 'Consumer lag per stage', { x: 12, y: 28, w: 12, h: 8 }, [
      promTarget('sum by (stage) (hamstring_worker_consumer_lag)', '{{stage}}'),
    ]),
    panel('timeseries', 'Commits, aborts and recoveries per second', { x: 0, y: 36, w: 12, h: 8 }, [
      promTarget(rate('hamstring_worker_transactions_committed_total'), 'commits {{stage}}', 'A'),
      promTarget(rate('hamstring_worker_transactions_aborted_total'), 'aborts {{stage}}', 'B'),
      promTarget(rate('hamstring_worker_recoveries_total'), 'recoveries {{stage}}', 'C'),
    ]),
    panel(
      'timeseries',
      'Alert conditions of the runtime (instances where each holds)',
      { x: 12, y: 36, w: 12, h: 8 },
      [promTarget('sum by (stage, condition) (hamstring_worker_alert)', '{{stage}} {{condition}}')],
      {
        description:
          'max_poll_exceeded_or_unknown_member, repeated_recovery_after_revoke, aborts_while_lag_grows, no_commit_while_input_arrives',
      },
    ),
    panel(
      'timeseries',
      'Transaction time p99 (begin to commit)',
      { x: 0, y: 44, w: 12, h: 8 },
      [
        promTarget(
          'histogram_quantile(0.99, sum by (le, stage) (rate(hamstring_worker_transaction_seconds_bucket[$__rate_interval])))',
          '{{stage}}',
        ),
      ],
      { unit: 's' },
    ),
    panel('timeseries', 'Workers ready', { x: 12, y: 44, w: 12, h: 8 }, [
      promTarget('sum by (stage) (hamstring_worker_ready)', '{{stage}}'),
    ]),
  ]);
}

function alerts() {
  nextId = 1;
  const host = `('\${host}' = '' OR client_ip = '\${host}')`;
  const detector = `ANY LEFT JOIN (SELECT suspicious_batch_id, any(instance_name) AS detector FROM \`${DB_MARK}\`.\`suspicious_batch_timestamps\` WHERE positionCaseInsensitive(stage, 'detector') > 0 GROUP BY suspicious_batch_id) USING suspicious_batch_id`;
  const inRange = `alert_timestamp >= ${FROM_MS} AND alert_timestamp <= ${TO_MS}`;
  return dashboard(
    'hamstring-alerts',
    'HAMSTRING alerts',
    [
      panel('timeseries', 'Alerts per second, per host', { x: 0, y: 0, w: 16, h: 8 }, [
        chTarget(
          [
            `SELECT toDateTime(intDiv(alert_timestamp, ${BUCKET_MS}) * $__interval_s) AS time, client_ip AS host, count() / $__interval_s AS alerts_per_second`,
            `FROM \`${DB_MARK}\`.\`alerts_dedup\` WHERE ${inRange} AND ${host} GROUP BY time, host ORDER BY time`,
          ].join('\n'),
          'timeseries',
        ),
      ]),
      panel('table', 'Hosts with most alerts', { x: 16, y: 0, w: 8, h: 8 }, [
        chTarget(
          `SELECT client_ip AS host, count() AS alerts, max(overall_score) AS max_score FROM \`${DB_MARK}\`.\`alerts_dedup\` WHERE ${inRange} GROUP BY host ORDER BY alerts DESC LIMIT 20`,
          'table',
        ),
      ]),
      panel('table', 'Alerts, newest first (filter: host)', { x: 0, y: 8, w: 24, h: 10 }, [
        chTarget(
          [
            'SELECT time, client_ip AS host, overall_score AS score, detector, domain_names AS domains, result FROM',
            `(SELECT ${time('alert_timestamp')}, alert_timestamp, client_ip, overall_score, domain_names, result, suspicious_batch_id FROM \`${DB_MARK}\`.\`alerts_dedup\` WHERE ${inRange} AND ${host} ORDER BY alert_timestamp DESC LIMIT 1000)`,
            detector,
            'ORDER BY alert_timestamp DESC',
          ].join('\n'),
          'table',
        ),
      ]),
      panel('table', "The host's latest lines (set host)", { x: 0, y: 18, w: 12, h: 10 }, [
        chTarget(grafanaHost(q.hostLineRows(200)), 'table'),
      ]),
      panel(
        'table',
        "Where the host's latest lines went: latency since line in per stage",
        { x: 12, y: 18, w: 12, h: 10 },
        [chTarget(grafanaHost(q.hostLineStages(200)), 'table')],
      ),
    ],
    [{ name: 'host', label: 'Host', type: 'textbox', query: '', current: { text: '', value: '' } }],
  );
}

/** The dashboards by file name under dev/grafana/. */
export function grafanaDashboards(): Record<string, unknown> {
  return { 'hamstring-pipeline.json': pipeline(), 'hamstring-alerts.json': alerts() };
}

export const GRAFANA_DIR = new URL('../dev/grafana/', import.meta.url);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [name, json] of Object.entries(grafanaDashboards())) {
    writeFileSync(new URL(name, GRAFANA_DIR), `${JSON.stringify(json, null, 2)}\n`);
    console.log(`wrote dev/grafana/${name}`);
  }
}
