import Kafka from '@confluentinc/kafka-javascript';
import type { IAdminClient, LibrdKafkaError } from '@confluentinc/kafka-javascript';
import type { KafkaSecurity } from '../config/index.ts';
import type { TopicSpec } from './admin.ts';
import {
  baseConfig,
  callback,
  connect,
  consume,
  disconnect,
  getMetadata,
  remaining,
  sleep,
  uniqueName,
} from './binding-calls.ts';

/** Topic the readiness probe writes one committed transaction to (1 partition, rf = min(3, brokers)). */
export const READINESS_PROBE_TOPIC = 'hamstring-readiness-probe';

/** Options of {@link probeKafkaReady}. */
export interface ProbeKafkaReadyOptions {
  /**
   * Group protocol of the probe consumer. Default 'consumer' (KIP-848), the protocol Kafka 4.x
   * prefers; 'classic' checks the older join/sync path.
   */
  groupProtocol?: 'classic' | 'consumer';
  /** How to connect; default the process's settings (a local cluster probes its PLAINTEXT listener). */
  security?: KafkaSecurity;
}

/**
 * Resolves once the cluster at `bootstrap` can do what the pipeline needs: a transactional
 * producer initialises and commits a transaction, and a consumer group member gets an
 * assignment. That implies a controller quorum, live brokers, and loaded transaction and group
 * coordinators, which a plain TCP or metadata check does not. Creates {@link READINESS_PROBE_TOPIC}
 * when missing. Retries until `timeoutMs`, then rejects with an Error naming the step that was
 * not ready and the client's last error.
 */
export async function probeKafkaReady(
  bootstrap: string,
  timeoutMs: number,
  opts: ProbeKafkaReadyOptions = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let attempts = 0;
  let failure = 'no attempt made';
  for (;;) {
    attempts += 1;
    const step = { name: 'metadata' };
    try {
      await probeOnce(bootstrap, deadline, step, opts.groupProtocol ?? 'consumer', opts.security);
      return;
    } catch (error) {
      failure = `${step.name} not ready (${describeError(error)})`;
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new Error(
        `Kafka at ${bootstrap} not ready after ${timeoutMs} ms (${attempts} attempts): ${failure}`,
      );
    }
    await sleep(Math.min(500, left));
  }
}

/** True when some broker of `bootstrap` answers a metadata request within `timeoutMs`. */
export async function probeKafkaReachable(bootstrap: string, timeoutMs: number): Promise<boolean> {
  const producer = new Kafka.Producer(baseConfig(bootstrap, 'reachable'));
  try {
    const metadata = await connect(producer, timeoutMs);
    return metadata.brokers.length > 0;
  } catch {
    return false;
  } finally {
    await disconnect(producer);
  }
}

/** One partition as the cluster metadata reports it (broker ids; leader -1 when there is none). */
export interface PartitionState {
  topic: string;
  partition: number;
  leader: number;
  replicas: number[];
  isr: number[];
}

/** Brokers and every partition of every topic (internal ones included), from one metadata request. */
export interface ClusterPartitions {
  brokers: number[];
  partitions: PartitionState[];
}

/** Reads the cluster metadata: which brokers are registered and each partition's leader and ISR. */
export async function describePartitions(
  bootstrap: string,
  timeoutMs: number,
  security?: KafkaSecurity,
): Promise<ClusterPartitions> {
  const producer = new Kafka.Producer(baseConfig(bootstrap, 'describe', security));
  try {
    await connect(producer, timeoutMs);
    const metadata = await getMetadata(producer, { allTopics: true, timeout: timeoutMs });
    return {
      brokers: metadata.brokers.map((b) => b.id).sort((a, b) => a - b),
      partitions: metadata.topics.flatMap((t) =>
        t.partitions.map((p) => ({
          topic: t.name,
          partition: p.id,
          leader: p.leader,
          replicas: [...p.replicas],
          isr: [...p.isrs],
        })),
      ),
    };
  } finally {
    await disconnect(producer);
  }
}

/**
 * Creates the topic unless it exists, then waits until every partition has a leader (a created
 * topic is not writable at once). An existing topic is accepted as it is.
 */
export async function ensureTopic(
  bootstrap: string,
  spec: TopicSpec,
  timeoutMs: number,
  security?: KafkaSecurity,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const admin = Kafka.AdminClient.create(baseConfig(bootstrap, 'admin', security));
  const producer = new Kafka.Producer(baseConfig(bootstrap, 'admin-metadata', security));
  try {
    await connect(producer, remaining(deadline));
    await createTopicIfMissing(admin, spec, remaining(deadline));
    for (;;) {
      const metadata = await getMetadata(producer, { allTopics: true, timeout: remaining(deadline) });
      const topic = metadata.topics.find((t) => t.name === spec.topic);
      if (topic && topic.partitions.length > 0 && topic.partitions.every((p) => p.leader >= 0)) return;
      if (Date.now() >= deadline)
        throw new Error(`topic ${spec.topic} has no leader for every partition yet`);
      await sleep(100);
    }
  } finally {
    admin.disconnect();
    await disconnect(producer);
  }
}

async function probeOnce(
  bootstrap: string,
  deadline: number,
  step: { name: string },
  groupProtocol: 'classic' | 'consumer',
  security: KafkaSecurity | undefined,
): Promise<void> {
  // Cap each step so that a client stuck on a broker that went away is replaced by a fresh one.
  const stepMs = (): number => Math.min(remaining(deadline), 30_000);
  step.name = 'metadata';
  const metadataProducer = new Kafka.Producer(baseConfig(bootstrap, 'probe-metadata', security));
  let brokers: number;
  try {
    brokers = (await connect(metadataProducer, stepMs())).brokers.length;
  } finally {
    await disconnect(metadataProducer);
  }
  if (brokers === 0) throw new Error('no broker registered');

  step.name = 'probe topic';
  const replicationFactor = Math.min(3, brokers);
  await ensureTopic(
    bootstrap,
    { topic: READINESS_PROBE_TOPIC, partitions: 1, replicationFactor },
    stepMs(),
    security,
  );

  step.name = 'transactions';
  await probeTransaction(bootstrap, stepMs, security);

  step.name = 'consumer group';
  await probeGroupJoin(bootstrap, stepMs(), groupProtocol, security);
}

async function probeTransaction(
  bootstrap: string,
  stepMs: () => number,
  security: KafkaSecurity | undefined,
): Promise<void> {
  const producer = new Kafka.Producer({
    ...baseConfig(bootstrap, 'probe-txn', security),
    'transactional.id': uniqueName('hamstring-readiness'),
  });
  try {
    await connect(producer, stepMs());
    await callback((cb) => producer.initTransactions(stepMs(), cb));
    await callback((cb) => producer.beginTransaction(cb));
    producer.produce(READINESS_PROBE_TOPIC, null, Buffer.from('ready'), null);
    await callback((cb) => producer.commitTransaction(stepMs(), cb));
  } finally {
    await disconnect(producer);
  }
}

async function probeGroupJoin(
  bootstrap: string,
  timeoutMs: number,
  protocol: 'classic' | 'consumer',
  security: KafkaSecurity | undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const groupId = uniqueName('hamstring-readiness');
  let assigned = false;
  let rebalanceError: string | undefined;
  const consumer = new Kafka.KafkaConsumer(
    {
      ...baseConfig(bootstrap, 'probe-group', security),
      'group.id': groupId,
      'group.protocol': protocol,
      'enable.auto.commit': false,
      rebalance_cb: true,
    },
    { 'auto.offset.reset': 'earliest' },
  );
  consumer.on('rebalance', (err, assignment) => {
    if (err.code === Kafka.CODES.ERRORS.ERR__ASSIGN_PARTITIONS && assignment.length > 0) assigned = true;
    else if (err.code !== Kafka.CODES.ERRORS.ERR__REVOKE_PARTITIONS) rebalanceError = err.message;
  });
  try {
    await connect(consumer, remaining(deadline));
    consumer.setDefaultConsumeTimeout(100);
    consumer.subscribe([READINESS_PROBE_TOPIC]);
    // Rebalance callbacks are only served while the consumer is polled.
    while (!assigned && Date.now() < deadline) await consume(consumer, 10);
    if (!assigned)
      throw new Error(rebalanceError ?? `no assignment for group ${groupId} within ${timeoutMs} ms`);
  } finally {
    await disconnect(consumer);
    await deleteGroupQuietly(bootstrap, groupId, security);
  }
}

/** Probe groups would otherwise pile up in every long-lived dev cluster. */
async function deleteGroupQuietly(
  bootstrap: string,
  groupId: string,
  security: KafkaSecurity | undefined,
): Promise<void> {
  const admin = Kafka.AdminClient.create(baseConfig(bootstrap, 'probe-cleanup', security));
  try {
    await new Promise<void>((resolve) => admin.deleteGroups([groupId], { timeout: 5000 }, () => resolve()));
  } finally {
    admin.disconnect();
  }
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

async function createTopicIfMissing(admin: IAdminClient, spec: TopicSpec, timeoutMs: number): Promise<void> {
  try {
    await callback((cb) =>
      admin.createTopic(
        {
          topic: spec.topic,
          num_partitions: spec.partitions,
          replication_factor: spec.replicationFactor,
          ...(spec.config ? { config: spec.config } : {}),
        },
        timeoutMs,
        cb,
      ),
    );
  } catch (error) {
    if ((error as LibrdKafkaError).code !== Kafka.CODES.ERRORS.ERR_TOPIC_ALREADY_EXISTS) throw error;
  }
}
