/**
 * A counting-stage worker in its own process, for tests that kill -9 it.
 * Env: BOOTSTRAP, INPUT, OUTPUT, GROUP, INSTANCE, STATE_DIR, BATCH_SIZE, and COMMIT_INTERVAL_MS for
 * transactions that span several batches.
 * Prints one JSON line per committed transaction.
 */
import { createLogger } from '../../src/observability/logger.ts';
import { TransactionalWorker } from '../../src/runtime/worker/transactional-worker.ts';
import { hostWorkers } from '../../src/runtime/worker-host.ts';
import { testKafkaOptions } from './pipeline-harness.ts';
import { countingStage } from './state-stages.ts';

const env = (k: string, d?: string): string => {
  const v = process.env[k] ?? d;
  if (v === undefined) throw new Error(`missing env ${k}`);
  return v;
};
let commits = 0;
const worker = new TransactionalWorker({
  stage: countingStage(env('INPUT'), env('OUTPUT'), env('GROUP')),
  instanceId: env('INSTANCE', '0'),
  mode: 'exactly-once',
  kafka: testKafkaOptions(env('BOOTSTRAP')),
  batch: { size: Number(env('BATCH_SIZE', '200')), timeoutMs: 50 },
  ...(process.env.COMMIT_INTERVAL_MS
    ? { commitInterval: { maxMs: Number(process.env.COMMIT_INTERVAL_MS) } }
    : {}),
  state: { dir: env('STATE_DIR'), replicationFactor: 1 },
  log: createLogger({}, 2),
  hooks: {
    afterCommit: ({ records }) => {
      commits += 1;
      process.stdout.write(`${JSON.stringify({ committed: commits, records })}\n`);
    },
  },
});
const host = await hostWorkers({ workers: [worker], log: createLogger({}, 2), healthPort: 0 });
process.exitCode = (await host.done) ? 1 : 0;
