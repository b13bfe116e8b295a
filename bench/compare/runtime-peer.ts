/**
 * The runtime as a bench:compare peer: one pass-through TransactionalWorker in a process of its own
 * (so its CPU time and RSS are its own), running until SIGTERM; then it prints `transactions <n>`. Started by bench/compare.ts with
 * its settings as JSON in HAMSTRING_COMPARE_PEER.
 */
import { createLogger } from '../../src/observability/logger.ts';
// The worker module itself: the runtime's public surface would add its config, health and pool modules' memory.
import { defaultClients } from '../../src/runtime/kafka-session.ts';
import { TransactionalWorker } from '../../src/runtime/worker/transactional-worker.ts';
import { passThroughStage, testKafkaOptions } from '../../test/support/pipeline-harness.ts';
import { startLoop } from './alternating-loop.ts';
import { traceSummary, tracedClients } from './port-trace.ts';

/** What bench/compare.ts passes to this process. */
export interface RuntimePeerConfig {
  bootstrap: string;
  input: string;
  output: string;
  group: string;
  mode: 'exactly-once' | 'at-least-once';
  batchSize: number;
  batchTimeoutMs: number;
  /** The stage's commit_interval_ms; absent: one transaction per batch. */
  commitIntervalMs?: number;
  /** The stage's commit interval in records; absent: no record bound. */
  commitIntervalRecords?: number;
  consumerOverrides: Record<string, string>;
  producerOverrides: Record<string, string>;
}

const cfg = JSON.parse(process.env.HAMSTRING_COMPARE_PEER ?? '') as RuntimePeerConfig;
const trace = process.env.HAMSTRING_COMPARE_TRACE === '1';
const kafka = testKafkaOptions(cfg.bootstrap, {
  maxPollIntervalMs: 300_000,
  transactionTimeoutMs: 60_000,
  messageTimeoutMs: 60_000,
  apiTimeoutMs: 30_000,
  consumerOverrides: cfg.consumerOverrides,
  producerOverrides: cfg.producerOverrides,
});
const log = createLogger({ bench: cfg.group }, 2);
// A bench-only prototype loop instead of the worker (alternating-loop.ts), chosen by a variant's e:.
const prototype = process.env.HAMSTRING_COMPARE_PROTOTYPE;
if (prototype === 'single' || prototype === 'single-noreports' || prototype === 'alternating') {
  const loop = await startLoop(
    {
      kafka,
      input: cfg.input,
      output: cfg.output,
      group: cfg.group,
      batchSize: cfg.batchSize,
      batchTimeoutMs: cfg.batchTimeoutMs,
      producers: prototype === 'alternating' ? 2 : 1,
      skipReports: prototype === 'single-noreports',
      clients: trace ? tracedClients : defaultClients,
    },
    log,
  );
  process.once('SIGTERM', () => {
    void loop.stop().then((n) => {
      if (trace) process.stderr.write(traceSummary());
      process.stdout.write(`transactions ${n}\n`, () => process.exit(0));
    });
  });
} else await runWorker();

async function runWorker(): Promise<void> {
  const worker = new TransactionalWorker({
    stage: passThroughStage(cfg.input, cfg.output, cfg.group),
    instanceId: 'compare',
    mode: cfg.mode,
    // config.yaml's values where they differ from the test defaults.
    kafka,
    batch: { size: cfg.batchSize, timeoutMs: cfg.batchTimeoutMs },
    ...(cfg.commitIntervalMs === undefined && cfg.commitIntervalRecords === undefined
      ? {}
      : {
          commitInterval: {
            ...(cfg.commitIntervalMs === undefined ? {} : { maxMs: cfg.commitIntervalMs }),
            ...(cfg.commitIntervalRecords === undefined ? {} : { maxRecords: cfg.commitIntervalRecords }),
          },
        }),
    // The transaction path alone, as the comparison with the peer client measured it: no delivery-attempt store.
    attemptStore: false,
    log,
    ...(trace ? { clients: tracedClients } : {}),
  });
  process.once('SIGTERM', () => {
    void worker.stop().then(() => {
      if (trace) process.stderr.write(traceSummary());
      // Read by bench:compare for the records per transaction (per offset commit at least once).
      process.stdout.write(`transactions ${worker.status().committedTransactions}\n`, () => process.exit(0));
    });
  });
  await worker.start();
}
