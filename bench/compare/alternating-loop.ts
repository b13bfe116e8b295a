/**
 * A bench-only prototype, not the runtime: an exactly-once copy loop on one or two transactional
 * producers (HAMSTRING_COMPARE_PROTOTYPE=single|alternating in a runtime peer's environment), to
 * tell whether alternating producers would lift exactly-once towards at-least-once before anyone
 * changes the runtime's committer.
 *
 * Each batch: begin, produce, send offsets, flush (every record delivered, so the next batch's
 * records are appended after this one's: per-partition order holds), then the commit runs behind
 * the next batch. With two producers, batch N+1 runs on the other producer while N's EndTxn and
 * its markers are under way, so N+1's AddPartitionsToTxn and AddOffsetsToTxn do not meet N's
 * CONCURRENT_TRANSACTIONS; N+1's commit waits for N's and aborts if N's failed, so committed
 * offsets never pass a lost transaction. No recovery: any failure ends the process.
 */
import type { ProducerPort } from '../../src/kafka/producer.ts';
import type { Logger } from '../../src/observability/logger.ts';
import { nextOffsets } from '../../src/runtime/batch-offsets.ts';
import {
  groupMemberSettings,
  type KafkaClientFactory,
  type WorkerKafkaOptions,
} from '../../src/runtime/worker-options.ts';

export interface LoopConfig {
  kafka: WorkerKafkaOptions;
  input: string;
  output: string;
  group: string;
  batchSize: number;
  batchTimeoutMs: number;
  producers: 1 | 2;
  /** Skip the wait for delivery reports: the commit alone tells whether every record was delivered. */
  skipReports?: boolean;
  /** The runtime's client factories, or timed ones (port-trace.ts). */
  clients: KafkaClientFactory;
}

export interface RunningLoop {
  /** Stops after the batch under way and waits for every commit; resolves to the transactions committed. */
  stop(): Promise<number>;
}

export async function startLoop(c: LoopConfig, log: Logger): Promise<RunningLoop> {
  const k = c.kafka;
  const consumer = c.clients.consumer(
    groupMemberSettings(k, { clientId: `${c.group}-proto-consumer`, groupId: c.group }),
    { onAssign: () => undefined, onRevoke: () => undefined, onLost: () => undefined },
    (err) => log.error({ err: err.message }, 'prototype: consumer error'),
    log,
  );
  await consumer.connect(k.apiTimeoutMs);
  consumer.subscribe([c.input]);
  const producers: ProducerPort[] = [];
  for (let i = 0; i < c.producers; i += 1) {
    const p = c.clients.producer(
      {
        bootstrapServers: k.bootstrapServers,
        clientId: `${c.group}-proto-producer-${i}`,
        transactionalId: `${c.group}-proto-${i}`,
        transactionTimeoutMs: k.transactionTimeoutMs,
        messageTimeoutMs: k.messageTimeoutMs,
        apiTimeoutMs: k.apiTimeoutMs,
        overrides: k.producerOverrides ?? {},
      },
      log,
    );
    await p.connect(k.apiTimeoutMs);
    await p.initTransactions();
    producers.push(p);
  }

  let stopping = false;
  let committed = 0;
  // Per producer: its last commit (the next batch on it waits for that one).
  const pending: Promise<void>[] = producers.map(() => Promise.resolve());
  // The latest commit of all: the next commit waits for it, so commits land in batch order.
  let last: Promise<void> = Promise.resolve();
  const fail = (e: unknown): never => {
    log.error({ err: (e as Error).message }, 'prototype: transaction failed');
    process.exit(3);
  };

  const loop = (async () => {
    for (let n = 0; !stopping;) {
      const records = await consumer.consume(c.batchSize, c.batchTimeoutMs);
      if (records.length === 0) continue;
      const slot = n % producers.length;
      const p = producers[slot]!;
      await pending[slot];
      await p.beginTransaction();
      for (const r of records) await p.produce({ topic: c.output, key: r.key, value: r.value });
      await p.sendOffsets(nextOffsets(records), consumer);
      await p.flush(k.apiTimeoutMs);
      if (!c.skipReports) {
        const t = p.tally();
        if (t.failed > 0 || t.delivered < t.produced) fail(new Error(`undelivered: ${JSON.stringify(t)}`));
      }
      const before = last;
      const commit = (async () => {
        try {
          await before;
        } catch (e) {
          await p.abortTransaction();
          throw e;
        }
        await p.commitTransaction();
        committed += 1;
      })();
      commit.catch(fail);
      pending[slot] = commit;
      last = commit;
      n += 1;
    }
  })();
  loop.catch(fail);

  return {
    async stop() {
      stopping = true;
      await loop;
      await last;
      for (const p of producers) await p.close(5_000);
      await consumer.close(5_000);
      return committed;
    },
  };
}
