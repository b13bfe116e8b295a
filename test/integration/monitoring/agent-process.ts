/**
 * A monitoring agent in its own process, for the crash tests: it exits (like kill -9: no consumer
 * close, no commit) right after its EXIT_AFTER_INSERTS-th successful ClickHouse insert, or (with
 * EXIT_BEFORE_COMMIT=n) in the worker's `beforeCommit` hook of its n-th batch, i.e. after every
 * insert of that batch and before its offsets commit; printing CRASHING first. Env: BOOTSTRAP,
 * CLICKHOUSE_URL, PREFIX, DATABASE, GROUP, TABLES (comma list), EXIT_AFTER_INSERTS or EXIT_BEFORE_COMMIT.
 */
import type { TableName } from '../../../src/monitoring/tables.ts';
import { monitoringWorldOf, startAgent, testConfig } from './support.ts';

const env = (k: string): string => {
  const v = process.env[k];
  if (v === undefined) throw new Error(`missing env ${k}`);
  return v;
};
const exitAfter = Number(process.env.EXIT_AFTER_INSERTS ?? 0);
const exitBeforeCommit = Number(process.env.EXIT_BEFORE_COMMIT ?? 0);
let inserts = 0;
let batches = 0;
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
  workerHooks: {
    beforeCommit: ({ records }) => {
      batches += 1;
      if (batches === exitBeforeCommit) {
        process.stdout.write(`CRASHING before commit ${batches} (${records} records inserted)\n`);
        process.exit(137);
      }
    },
  },
});
process.stdout.write('STARTED\n');
