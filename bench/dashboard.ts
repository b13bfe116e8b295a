/**
 * How long the dashboard's ClickHouse queries take as the monitoring tables grow.
 *
 *   node --import tsx bench/dashboard.ts [--minutes 15] [--lines-per-second 200] [--rounds 3]
 *
 * Writes a pipeline's monitoring rows (the fixture of test/integration/dashboard: six hosts,
 * batches every 10 s, alerts for two hosts) covering `--minutes` at `--lines-per-second` into a
 * fresh database of the test ClickHouse (HAMSTRING_TEST_CLICKHOUSE_HTTP_PORT, default 21123), then
 * prints the time of one pipeline-page refresh, of the alerts page and of one host's page.
 */
import { parseArgs } from 'node:util';
import { ClickHouseReader } from '../src/app/dashboard/clickhouse-reader.ts';
import { DashboardData } from '../src/app/dashboard/dashboard-data.ts';
import { DashboardQueries } from '../src/app/dashboard/dashboard-queries.ts';
import { testClickHouse } from '../test/helpers/clickhouse-fixture.ts';
import { createDataset, dropDataset } from '../test/integration/dashboard/monitoring-rows.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '15' },
    'lines-per-second': { type: 'string', default: '200' },
    rounds: { type: 'string', default: '3' },
  },
});
const minutes = Number(values.minutes);
const rate = Number(values['lines-per-second']);
const rounds = Number(values.rounds);

const ch = await testClickHouse();
const started = Date.now();
const dataset = await createDataset(ch.url, Date.now(), { seconds: minutes * 60, lineEveryMs: 1000 / rate });
console.log(
  `wrote ${dataset.counts.loglines} lines (${minutes} min at ${rate}/s), ${dataset.counts.alerts} alerts in ${((Date.now() - started) / 1000).toFixed(1)} s; ClickHouse ${dataset.conn.version.text}`,
);
const reader = new ClickHouseReader(dataset.target);
// A fresh DashboardData per page load: its cache of the lineage query would hide the query's cost.
const fresh = () =>
  new DashboardData(reader, new DashboardQueries(dataset.target.database), undefined, minutes * 60_000);

async function time(what: string, run: () => Promise<unknown>): Promise<void> {
  const ms: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = performance.now();
    const out = await run();
    ms.push(performance.now() - t0);
    if (
      out &&
      typeof out === 'object' &&
      'errors' in out &&
      Array.isArray(out.errors) &&
      out.errors.length > 0
    )
      throw new Error(`${what}: ${out.errors.join('; ')}`);
  }
  ms.sort((a, b) => a - b);
  console.log(
    `${what.padEnd(28)} median ${ms[Math.floor(ms.length / 2)]!.toFixed(0)} ms, max ${ms.at(-1)!.toFixed(0)} ms`,
  );
}

try {
  await time('pipeline page (7 queries)', () => fresh().pipeline());
  await time('alerts page (500 alerts)', () => fresh().alerts({ limit: 500 }));
  await time('host page (200 lines)', () => fresh().host(dataset.infected[0]!, 200));
} finally {
  await reader.close();
  await dropDataset(dataset);
}
