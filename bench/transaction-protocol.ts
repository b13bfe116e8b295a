/**
 * bench:transaction-protocol: what transaction protocol version 2 (KIP-890) saves per transaction,
 * against version 1, with the runtime's Kafka adapter on one local broker. Two loops per version,
 * the versions alternating, each on fresh topics and a fresh transactional id:
 *
 * - tiny: N transactions of 10 records over 3 partitions, produced and committed one after the
 *   other (no consumer): the protocol's own cost per transaction;
 * - copy: a consume-transform-produce loop of 500-record transactions (200 B outputs in the input
 *   record's partition, offsets sent, then commit), as a worker without the overlapped commit.
 *
 * It prints per run: transactions/s or records/s, the mean milliseconds of each step, and the
 * requests the producer sent (librdkafka's statistics), so the round trips each version saves show.
 *
 *   npm run bench:transaction-protocol [-- --tiny 300] [--copy-transactions 100] [--reps 2] [--port 24392]
 *
 * HAMSTRING_BENCH_BOOTSTRAP=host:port uses an existing broker.
 */
import { parseArgs } from 'node:util';
import { createConsumer } from '../src/kafka/consumer.ts';
import { createProducer, type ProducerPort } from '../src/kafka/producer.ts';
import { silentLogger } from '../src/observability/logger.ts';
import { testConsumerSettings } from '../test/helpers/consumer-settings.ts';
import { createTopics, seed } from '../test/support/pipeline-harness.ts';
import { obtainBroker } from './bench-broker.ts';

const { values } = parseArgs({
  options: {
    tiny: { type: 'string', default: '300' },
    'copy-transactions': { type: 'string', default: '100' },
    reps: { type: 'string', default: '2' },
    port: { type: 'string', default: '24392' },
    'keep-broker': { type: 'boolean', default: false },
  },
});
const TINY = Number(values.tiny);
const COPY_TXNS = Number(values['copy-transactions']);
const PER_TXN = 500;
const log = (m: string): void => void process.stderr.write(`[txn-protocol] ${m}\n`);
const run = `${Date.now().toString(36)}`;

function producerFor(bootstrap: string, version: 1 | 2, id: string): ProducerPort {
  return createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: `txp-${id}`,
      transactionalId: `txp-${id}`,
      transactionTimeoutMs: 30_000,
      transactionVersion: version,
      messageTimeoutMs: 20_000,
      apiTimeoutMs: 20_000,
    },
    silentLogger(),
  );
}

/** The requests of the first statistics report that counts `endTxns` EndTxn requests. */
async function requestsAfter(producer: ProducerPort, endTxns: number): Promise<string> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const s = producer.protocolStats?.();
    if ((s && (s.requests.EndTxn ?? 0) >= endTxns) || Date.now() > deadline) {
      const r = s?.requests ?? {};
      const apis = ['Produce', 'AddPartitionsToTxn', 'AddOffsetsToTxn', 'TxnOffsetCommit', 'EndTxn'];
      return `${apis.map((a) => `${a} ${r[a] ?? 0}`).join(', ')}; epoch ${s?.producerEpoch ?? '?'}`;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function tiny(bootstrap: string, version: 1 | 2, id: string): Promise<void> {
  const topic = `txp-tiny-${id}`;
  await createTopics(bootstrap, [topic], 3);
  const producer = producerFor(bootstrap, version, id);
  try {
    await producer.connect(20_000);
    await producer.initTransactions();
    const start = performance.now();
    for (let t = 0; t < TINY; t++) {
      await producer.beginTransaction();
      for (let i = 0; i < 10; i++)
        await producer.produce({ topic, partition: i % 3, key: `k${i}`, value: `t${t}-${i}` });
      await producer.commitTransaction();
    }
    const ms = performance.now() - start;
    log(`v${version} tiny: ${TINY} transactions in ${Math.round(ms)} ms, ${(ms / TINY).toFixed(2)} ms each`);
    log(`  requests: ${await requestsAfter(producer, TINY)}`);
  } finally {
    await producer.close(5_000);
  }
}

async function copy(bootstrap: string, version: 1 | 2, id: string): Promise<void> {
  const input = `txp-in-${id}`;
  const output = `txp-out-${id}`;
  await createTopics(bootstrap, [input, output], 6);
  await seed(bootstrap, input, 0, COPY_TXNS * PER_TXN);
  const consumer = createConsumer(
    testConsumerSettings(bootstrap, `txp-${id}`, `txp-${id}`),
    { onAssign: () => undefined, onRevoke: () => undefined, onLost: () => undefined },
    () => undefined,
    silentLogger(),
  );
  const producer = producerFor(bootstrap, version, id);
  const pad = 'x'.repeat(190);
  const ms = { produce: 0, offsets: 0, commit: 0 };
  try {
    await consumer.connect(20_000);
    consumer.subscribe([input]);
    await producer.connect(20_000);
    await producer.initTransactions();
    let copied = 0;
    let txns = 0;
    const start = performance.now();
    while (copied < COPY_TXNS * PER_TXN) {
      const records = await consumer.consume(PER_TXN, 500);
      if (records.length === 0) continue;
      const a = performance.now();
      await producer.beginTransaction();
      for (const r of records)
        await producer.produce({
          topic: output,
          partition: r.partition,
          key: r.key,
          value: pad + r.value?.toString(),
        });
      const b = performance.now();
      const next = new Map(records.map((r) => [r.partition, r.offset + 1]));
      await producer.sendOffsets(
        [...next].map(([partition, offset]) => ({ topic: input, partition, offset })),
        consumer,
      );
      const c = performance.now();
      await producer.commitTransaction();
      const d = performance.now();
      ms.produce += b - a;
      ms.offsets += c - b;
      ms.commit += d - c;
      copied += records.length;
      txns += 1;
    }
    const secs = (performance.now() - start) / 1000;
    const each = (v: number): string => (v / txns).toFixed(2);
    log(
      `v${version} copy: ${Math.round(copied / secs)} records/s, ${txns} transactions; ms each: ` +
        `produce ${each(ms.produce)}, send offsets ${each(ms.offsets)}, commit ${each(ms.commit)}`,
    );
    log(`  requests: ${await requestsAfter(producer, txns)}`);
  } finally {
    await producer.close(5_000);
    await consumer.close(5_000);
  }
}

const broker = await obtainBroker(Number(values.port), values['keep-broker'], log);
try {
  for (let rep = 0; rep < Number(values.reps); rep++)
    for (const version of rep % 2 === 0 ? ([1, 2] as const) : ([2, 1] as const)) {
      await tiny(broker.bootstrap, version, `${run}-t${rep}v${version}`);
      await copy(broker.bootstrap, version, `${run}-c${rep}v${version}`);
    }
} finally {
  await broker.release();
}
process.exit(0);
