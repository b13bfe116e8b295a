/**
 * A monitoring agent in its own process, for the crash test: it exits (like kill -9: no consumer
 * close, no commit) right after its EXIT_AFTER_INSERTS-th successful ClickHouse insert, printing
 * CRASHING first. Env: BOOTSTRAP, CLICKHOUSE_URL, PREFIX, DATABASE, GROUP, TABLES (comma list),
 * EXIT_AFTER_INSERTS.
 */
import type { TableName } from '../../../src/monitoring/tables.ts';
import { monitoringWorldOf, startAgent, testConfig } from './support.ts';

const env = (k: string): string => {
  const v = process.env[k];
  if (v === undefined) throw new Error(`missing env ${k}`);
  return v;
};
const exitAfter = Number(env('EXIT_AFTER_INSERTS'));
let inserts = 0;
const bootstrap = env('BOOTSTRAP');
const world = monitoringWorldOf(
  env('PREFIX'),
  env('DATABASE'),
  env('GROUP'),
  env('TABLES').split(',') as TableName[],
);
await startAgent(testConfig(bootstrap, env('CLICKHOUSE_URL')), bootstrap, world, {
  hooks: {
    afterInsert: ({ rows }) => {
      inserts += 1;
      if (inserts === exitAfter) {
        process.stdout.write(`CRASHING after ${inserts} inserts (last ${rows} rows)\n`);
        process.exit(137);
      }
    },
  },
});
process.stdout.write('STARTED\n');
