import { after } from 'node:test';
import { silentLogger } from '../../src/observability/logger.ts';
import { TransactionalWorker, type WorkerOptions } from '../../src/runtime/index.ts';
import { passThroughStage, testKafkaOptions } from './pipeline-harness.ts';

export interface PassThroughWorkerOptions {
  input: string;
  output: string;
  /** Also the stage's name. */
  group: string;
  instance: string;
  batchSize: number;
  /** How long a consume waits for a full batch (default 50 ms, config.yaml's). */
  batchTimeoutMs?: number;
  kafka?: Parameters<typeof testKafkaOptions>[1];
  mode?: WorkerOptions['mode'];
  commitInterval?: WorkerOptions['commitInterval'];
  clients?: WorkerOptions['clients'];
}

/** A worker copying `input` to `output` on the test broker (exactly-once unless `mode` says). */
export function passThroughWorker(bootstrap: string, o: PassThroughWorkerOptions): TransactionalWorker {
  return new TransactionalWorker({
    stage: passThroughStage(o.input, o.output, o.group),
    instanceId: o.instance,
    mode: o.mode ?? 'exactly-once',
    kafka: testKafkaOptions(bootstrap, o.kafka ?? {}),
    batch: { size: o.batchSize, timeoutMs: o.batchTimeoutMs ?? 50 },
    ...(o.commitInterval ? { commitInterval: o.commitInterval } : {}),
    ...(o.clients ? { clients: o.clients } : {}),
    log: silentLogger(),
  });
}

/**
 * The workers a suite started, stopped when it ends; call it inside `describe`. A test that stops a
 * worker itself takes it out of the list.
 */
export function stoppedAfterSuite(): TransactionalWorker[] {
  const running: TransactionalWorker[] = [];
  after(async () => {
    await Promise.all(running.map((w) => w.stop()));
  });
  return running;
}
