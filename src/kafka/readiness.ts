import { randomBytes } from 'node:crypto';
import Kafka from '@confluentinc/kafka-javascript';
import type {
  GlobalConfig,
  IAdminClient,
  KafkaConsumer,
  LibrdKafkaError,
  Message,
  Metadata,
  Producer,
} from '@confluentinc/kafka-javascript';

/** Topic the readiness probe writes one committed transaction to (1 partition, rf = min(3, brokers)). */
export const READINESS_PROBE_TOPIC = 'hamstring-readiness-probe';

/** Options of {@link probeKafkaReady}. */
export interface ProbeKafkaReadyOptions {
  /**
   * Group protocol of the probe consumer. Default 'consumer' (KIP-848), the protocol Kafka 4.x
   * prefers; 'classic' checks the older join/sync path.
   */
  groupProtocol?: 'classic' | 'consumer';
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
      await probeOnce(bootstrap, deadline, step, opts.groupProtocol ?? 'consumer');
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
export async function describePartitions(bootstrap: string, timeoutMs: number): Promise<ClusterPartitions> {
  const producer = new Kafka.Producer(baseConfig(bootstrap, 'describe'));
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

/** A topic to create with {@link ensureTopic}. */
export interface TopicSpec {
  topic: string;
  partitions: number;
  replicationFactor: number;
  config?: Record<string, string>;
}

/**
 * Creates the topic unless it exists, then waits until every partition has a leader (a created
 * topic is not writable at once). An existing topic is accepted as it is.
 */
export async function ensureTopic(bootstrap: string, spec: TopicSpec, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const admin = Kafka.AdminClient.create(baseConfig(bootstrap, 'admin'));
  const producer = new Kafka.Producer(baseConfig(bootstrap, 'admin-metadata'));
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

async function probeOnce(
  bootstrap: string,
  deadline: number,
  step: { name: string },
  groupProtocol: 'classic' | 'consumer',
): Promise<void> {
  // Cap each step so that a client stuck on a broker that went away is replaced by a fresh one.
  const stepMs = (): number => Math.min(remaining(deadline), 30_000);
  step.name = 'metadata';
  const metadataProducer = new Kafka.Producer(baseConfig(bootstrap, 'probe-metadata'));
  let brokers: number;
  try {
    brokers = (await connect(metadataProducer, stepMs())).brokers.length;
  } finally {
    await disconnect(metadataProducer);
  }
  if (brokers === 0) throw new Error('no broker registered');

  step.name = 'probe topic';
  const replicationFactor = Math.min(3, brokers);
  await ensureTopic(bootstrap, { topic: READINESS_PROBE_TOPIC, partitions: 1, replicationFactor }, stepMs());

  step.name = 'transactions';
  await probeTransaction(bootstrap, stepMs);

  step.name = 'consumer group';
  await probeGroupJoin(bootstrap, stepMs(), groupProtocol);
}

async function probeTransaction(bootstrap: string, stepMs: () => number): Promise<void> {
  const producer = new Kafka.Producer({
    ...baseConfig(bootstrap, 'probe-txn'),
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
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const groupId = uniqueName('hamstring-readiness');
  let assigned = false;
  let rebalanceError: string | undefined;
  const consumer = new Kafka.KafkaConsumer(
    {
      ...baseConfig(bootstrap, 'probe-group'),
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
    await deleteGroupQuietly(bootstrap, groupId);
  }
}

/** Probe groups would otherwise pile up in every long-lived dev cluster. */
async function deleteGroupQuietly(bootstrap: string, groupId: string): Promise<void> {
  const admin = Kafka.AdminClient.create(baseConfig(bootstrap, 'probe-cleanup'));
  try {
    await new Promise<void>((resolve) => admin.deleteGroups([groupId], { timeout: 5000 }, () => resolve()));
  } finally {
    admin.disconnect();
  }
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

function baseConfig(bootstrap: string, role: string): GlobalConfig {
  return {
    'bootstrap.servers': bootstrap,
    'client.id': `hamstring-${role}`,
    // Brokers that are starting or restarting: retry connections quickly rather than backing off to 10 s.
    'reconnect.backoff.ms': 100,
    'reconnect.backoff.max.ms': 1000,
  };
}

function connect(client: Producer | KafkaConsumer, timeoutMs: number): Promise<Metadata> {
  return callback<Metadata>((cb) => client.connect({ timeout: timeoutMs }, cb));
}

function getMetadata(
  client: Producer | KafkaConsumer,
  opts: { allTopics: boolean; timeout: number },
): Promise<Metadata> {
  return callback<Metadata>((cb) => {
    client.getMetadata(opts, cb);
  });
}

function consume(consumer: KafkaConsumer, max: number): Promise<Message[]> {
  return callback<Message[]>((cb) => consumer.consume(max, cb));
}

/** Disconnects, but never waits more than 10 s: a client talking to a dead cluster can hang in close. */
function disconnect(client: Producer | KafkaConsumer): Promise<void> {
  if (!client.isConnected()) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 10_000);
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    if (isProducer(client)) client.disconnect(5000, done);
    else client.disconnect(done);
  });
}

function isProducer(client: Producer | KafkaConsumer): client is Producer {
  return client instanceof Kafka.Producer;
}

function callback<T = void>(
  start: (cb: (err: LibrdKafkaError | null | undefined, value: T) => void) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    start((err, value) => (err ? reject(toError(err)) : resolve(value)));
  });
}

function toError(err: LibrdKafkaError | Error): Error {
  if (err instanceof Error) return err;
  return Object.assign(new Error(err.message), { code: err.code });
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function remaining(deadline: number): number {
  return Math.max(1, deadline - Date.now());
}

function uniqueName(prefix: string): string {
  return `${prefix}-${process.pid}-${randomBytes(6).toString('hex')}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
