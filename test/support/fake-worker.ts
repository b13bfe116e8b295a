import { silentLogger } from '../../src/observability/logger.ts';
import { TransactionalWorker, type Stage, type WorkerOptions } from '../../src/runtime/index.ts';
import { FakeClock, FakeKafka, FakeTopic } from './worker-fakes.ts';

/** Names of the copy stage a fake worker runs and of its input and output topics. */
export interface CopyNames {
  stage: string;
  input: string;
  output: string;
}

/** A stage that copies each record to `output`, keeping its key and value. */
export function copyStage({ stage, input, output }: CopyNames): Stage {
  return {
    name: stage,
    inputTopics: [input],
    outputTopics: [output],
    process: (records) => ({
      outputs: records.map((r) => ({ topic: output, key: r.key, value: r.value, source: r })),
    }),
  };
}

/** Kafka options of a worker on fake clients: short, fixed timeouts the tests' fake clock moves through. */
export const FAKE_KAFKA_OPTIONS: WorkerOptions['kafka'] = {
  bootstrapServers: 'fake:9092',
  groupProtocol: 'classic',
  assignmentStrategy: 'cooperative-sticky',
  sessionTimeoutMs: 10_000,
  heartbeatIntervalMs: 1_000,
  maxPollIntervalMs: 60_000,
  transactionTimeoutMs: 60_000,
  messageTimeoutMs: 30_000,
  apiTimeoutMs: 5_000,
  commitRetryTimeoutMs: 5_000,
};

/**
 * An exactly-once worker running the copy stage on fake clients and a fake clock, for driving its
 * loop one step at a time (`start({ loop: false })`, `step()`): the input's one partition holds
 * `records` records, batches are of 10; `extra` overrides any option.
 */
export function fakeWorker(names: CopyNames, records: number, extra: Partial<WorkerOptions> = {}) {
  const kafka = new FakeKafka(new FakeTopic(names.input, records), [names.output]);
  const clock = new FakeClock();
  const worker = new TransactionalWorker({
    stage: copyStage(names),
    instanceId: '0',
    mode: 'exactly-once',
    batch: { size: 10, timeoutMs: 10 },
    kafka: FAKE_KAFKA_OPTIONS,
    clients: kafka.clients(),
    // Fake clients have no cluster for the worker's own Kafka-backed attempt store.
    attemptStore: false,
    clock,
    log: silentLogger(),
    ...extra,
  });
  return { kafka, clock, worker };
}
