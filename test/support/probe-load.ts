import Kafka from '@confluentinc/kafka-javascript';
import { randomBytes } from 'node:crypto';
import {
  baseConfig,
  connect,
  consume,
  disconnect,
  remaining,
  uniqueName,
} from '../../src/kafka/binding-calls.ts';

/**
 * Background traffic for infrastructure tests: an idempotent (acks=all) producer that keeps
 * writing records whose values are unique ids, tracking which ones the cluster acknowledged.
 */
export interface ProbeLoad {
  /** Ids whose delivery report succeeded. */
  readonly acked: ReadonlySet<string>;
  /** Delivery failures as "id: error". */
  readonly failures: readonly string[];
  /** How many records were handed to the client. */
  readonly sent: number;
  /** Stops producing, waits for outstanding deliveries (bounded), disconnects. */
  stop(): Promise<void>;
}

/** Options of {@link startProbeLoad}. */
export interface ProbeLoadOptions {
  recordsPerTick?: number;
  tickMs?: number;
  /** Outstanding records are retried for this long, so a failover in between is not a loss. */
  messageTimeoutMs?: number;
}

/** Starts a {@link ProbeLoad} against `topic` (which must exist). */
export async function startProbeLoad(
  bootstrap: string,
  topic: string,
  opts: ProbeLoadOptions = {},
): Promise<ProbeLoad> {
  const messageTimeoutMs = opts.messageTimeoutMs ?? 120_000;
  const producer = new Kafka.Producer({
    ...baseConfig(bootstrap, 'load'),
    'enable.idempotence': true,
    acks: -1,
    'linger.ms': 5,
    'message.timeout.ms': messageTimeoutMs,
    dr_cb: true,
  });
  await connect(producer, 30_000);
  producer.setPollInterval(50);
  const prefix = `${process.pid}-${randomBytes(4).toString('hex')}`;
  const acked = new Set<string>();
  const failures: string[] = [];
  let sent = 0;
  producer.on('delivery-report', (err, report) => {
    const id = String(report.opaque);
    if (err) failures.push(`${id}: ${err.message}`);
    else acked.add(id);
  });
  const timer = setInterval(() => {
    for (let i = 0; i < (opts.recordsPerTick ?? 10); i++) {
      const id = `${prefix}-${sent}`;
      try {
        producer.produce(topic, null, Buffer.from(id), id, null, id);
        sent += 1;
      } catch {
        return; // local queue full: try again next tick
      }
    }
  }, opts.tickMs ?? 20);
  return {
    acked,
    failures,
    get sent() {
      return sent;
    },
    async stop() {
      clearInterval(timer);
      await new Promise<void>((resolve) => producer.flush(messageTimeoutMs, () => resolve()));
      await disconnect(producer);
    },
  };
}

/** What {@link readProbeIds} read. */
export interface ProbeRead {
  /** Distinct record values. */
  ids: Set<string>;
  /** Records read, duplicates included. */
  records: number;
}

/**
 * Reads `topic` from the beginning of every partition (assigned directly, no group) until
 * `expected` distinct values were seen or `timeoutMs` passed; returns what it read either way.
 */
export async function readProbeIds(
  bootstrap: string,
  topic: string,
  opts: { expected: number; timeoutMs: number },
): Promise<ProbeRead> {
  const deadline = Date.now() + opts.timeoutMs;
  const consumer = new Kafka.KafkaConsumer(
    {
      ...baseConfig(bootstrap, 'read'),
      'group.id': uniqueName('hamstring-read'),
      'enable.auto.commit': false,
    },
    { 'auto.offset.reset': 'earliest' },
  );
  const result: ProbeRead = { ids: new Set(), records: 0 };
  try {
    const metadata = await connect(consumer, remaining(deadline));
    const partitions = metadata.topics.find((t) => t.name === topic)?.partitions ?? [];
    if (partitions.length === 0) throw new Error(`topic ${topic} not found`);
    consumer.assign(partitions.map((p) => ({ topic, partition: p.id, offset: 0 })));
    consumer.setDefaultConsumeTimeout(200);
    while (result.ids.size < opts.expected && Date.now() < deadline) {
      for (const message of await consume(consumer, 1000)) {
        result.records += 1;
        if (message.value) result.ids.add(message.value.toString());
      }
    }
    return result;
  } finally {
    await disconnect(consumer);
  }
}
