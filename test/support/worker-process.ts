/**
 * A pass-through worker in its own process, for tests that kill -9 or SIGSTOP a worker.
 * Env: BOOTSTRAP, INPUT, OUTPUT, GROUP, INSTANCE, BATCH_SIZE, HOLD_AT_COMMIT (n: the nth commit
 * waits forever after send-offsets, printing HOLDING, so the test can kill it mid-transaction).
 * Prints one JSON line per committed transaction.
 */
import { TransactionalWorker } from '../../src/runtime/index.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { hostWorkers } from '../../src/runtime/worker-host.ts';
import { passThroughStage, testKafkaOptions } from './pipeline-harness.ts';
import { NonRetryableError } from '../../src/runtime/stage.ts';
import { KafkaAttemptStore } from '../../src/runtime/delivery-attempts/kafka-attempt-store.ts';

const env = (k: string, d?: string): string => {
  const v = process.env[k] ?? d;
  if (v === undefined) throw new Error(`missing env ${k}`);
  return v;
};
const holdAt = Number(env('HOLD_AT_COMMIT', '0'));
// A record (by sequence number) the stage fails with a non-retryable error, and whether the process
// dies right before committing a transaction that carries a dead letter.
const failSeq = Number(env('FAIL_SEQ', '-1'));
const crashWithDeadLetter = env('CRASH_BEFORE_COMMIT_WITH_DEAD_LETTER', '') === '1';
// A record whose processing kills the process every time, and the durable attempt store that bounds it.
const crashSeq = Number(env('CRASH_SEQ', '-1'));
const attemptStore =
  env('ATTEMPT_STORE', '') === 'kafka'
    ? new KafkaAttemptStore({
        bootstrapServers: env('BOOTSTRAP'),
        // The test's own topic: the default one is shared by every process on the broker.
        ...(process.env.ATTEMPTS_TOPIC ? { topic: process.env.ATTEMPTS_TOPIC } : {}),
      })
    : undefined;
await attemptStore?.start();
let commits = 0;
const worker = new TransactionalWorker({
  stage: {
    ...passThroughStage(env('INPUT'), env('OUTPUT'), env('GROUP')),
    process: (records) => {
      if (records.some((r) => Number(r.value?.toString()) === crashSeq)) process.kill(process.pid, 'SIGKILL');
      return {
        outputs: records
          .filter((r) => Number(r.value?.toString()) !== failSeq)
          .map((r) => ({ topic: env('OUTPUT'), key: r.key, value: r.value })),
        failures: records
          .filter((r) => Number(r.value?.toString()) === failSeq)
          .map((r) => ({ record: r, error: new NonRetryableError(`record ${failSeq} is rejected`) })),
      };
    },
  },
  ...(attemptStore ? { attemptStore } : {}),
  recordErrors: { maxDeliveries: Number(env('MAX_DELIVERIES', '3')) },
  instanceId: env('INSTANCE', '0'),
  mode: 'exactly-once',
  kafka: testKafkaOptions(env('BOOTSTRAP')),
  batch: { size: Number(env('BATCH_SIZE', '50')), timeoutMs: 50 },
  log: createLogger({}, 2),
  hooks: {
    beforeCommit: async ({ deadLetters }) => {
      if (crashWithDeadLetter && deadLetters > 0) {
        process.stdout.write('CRASHING\n');
        process.kill(process.pid, 'SIGKILL');
      }
      if (holdAt > 0 && commits + 1 === holdAt) {
        process.stdout.write('HOLDING\n');
        await new Promise(() => undefined);
      }
    },
    afterCommit: ({ records }) => {
      commits += 1;
      process.stdout.write(`${JSON.stringify({ committed: commits, records })}\n`);
    },
  },
});
const host = await hostWorkers({
  workers: [worker],
  log: createLogger({}, 2),
  healthPort: Number(env('HEALTH_PORT', '0')),
});
if (host.healthPort !== undefined) process.stdout.write(`HEALTH ${host.healthPort}\n`);
process.exitCode = (await host.done) ? 1 : 0;
