import Kafka from '@confluentinc/kafka-javascript';
import { classifyKafkaError } from './classify.ts';
import { OFFSET_INVALID, type TopicPartitionOffset } from './records.ts';

/** A topic to create (`AdminPort.createTopics`, `ensureTopic`); `config` holds topic configs such as `cleanup.policy`. */
export interface TopicSpec {
  topic: string;
  partitions: number;
  replicationFactor: number;
  config?: Record<string, string>;
}

export interface GroupMember {
  memberId: string;
  clientId: string;
  partitions: { topic: string; partition: number }[];
}

export interface GroupState {
  groupId: string;
  /** Stable, PreparingRebalance, CompletingRebalance, Empty, Dead, Unknown. */
  state: string;
  members: GroupMember[];
}

/** Cluster administration the runtime, the CLI and tests need. */
export interface AdminPort {
  createTopics(topics: TopicSpec[], timeoutMs?: number): Promise<void>;
  deleteTopics(topics: string[], timeoutMs?: number): Promise<void>;
  listTopics(timeoutMs?: number): Promise<string[]>;
  describeGroup(groupId: string, timeoutMs?: number): Promise<GroupState>;
  /** Committed offsets of a group (next offset to read; < 0 when none), per partition of the given topics. */
  groupOffsets(groupId: string, topics: string[], timeoutMs?: number): Promise<TopicPartitionOffset[]>;
  /** Grows a topic to `partitions` partitions in total. */
  createPartitions(topic: string, partitions: number, timeoutMs?: number): Promise<void>;
  /** Partition count of each topic from the cluster's metadata (a missing topic is absent). */
  partitionCounts(topics: readonly string[], timeoutMs?: number): Promise<Map<string, number>>;
  /** Low and high watermark per partition of a topic. */
  watermarks(topic: string, timeoutMs?: number): Promise<{ partition: number; low: number; high: number }[]>;
  close(): void;
}

const STATES = ['Unknown', 'PreparingRebalance', 'CompletingRebalance', 'Stable', 'Dead', 'Empty'];

export function createAdmin(bootstrapServers: string, clientId = 'hamstring-admin'): AdminPort {
  const admin = Kafka.AdminClient.create({ 'bootstrap.servers': bootstrapServers, 'client.id': clientId });
  const call = <T>(fn: (cb: (err: unknown, v: T) => void) => void) =>
    new Promise<T>((resolve, reject) =>
      fn((err, v) => (err ? reject(classifyKafkaError(err, 'admin')) : resolve(v))),
    );
  const TOPIC_EXISTS = Kafka.CODES.ERRORS.ERR_TOPIC_ALREADY_EXISTS;

  const metadataClient = new Kafka.Producer({
    'bootstrap.servers': bootstrapServers,
    'client.id': `${clientId}-meta`,
  });
  let metadataReady: Promise<void> | undefined;
  const metadata = () => {
    metadataReady ??= new Promise<void>((resolve, reject) =>
      metadataClient.connect({ timeout: 10_000 }, (err) =>
        err ? reject(classifyKafkaError(err, 'admin')) : resolve(),
      ),
    ).catch((e: unknown) => {
      // A connect that failed (Kafka away) is tried again by the next call, not remembered.
      metadataReady = undefined;
      throw e;
    });
    return metadataReady;
  };

  return {
    async createTopics(topics, timeoutMs = 30_000) {
      for (const t of topics) {
        await call<void>((cb) =>
          admin.createTopic(
            {
              topic: t.topic,
              num_partitions: t.partitions,
              replication_factor: t.replicationFactor,
              config: t.config ?? {},
            },
            timeoutMs,
            (err) => cb(err && (err as { code?: number }).code === TOPIC_EXISTS ? undefined : err, undefined),
          ),
        );
      }
    },
    async deleteTopics(topics, timeoutMs = 30_000) {
      for (const t of topics)
        await call<void>((cb) => admin.deleteTopic(t, timeoutMs, (err) => cb(err, undefined)));
    },
    async createPartitions(topic, partitions, timeoutMs = 30_000) {
      await call<void>((cb) =>
        admin.createPartitions(topic, partitions, timeoutMs, (err) => cb(err, undefined)),
      );
    },
    async partitionCounts(topics, timeoutMs = 10_000) {
      await metadata();
      const md = await call<Kafka.Metadata>((cb) => {
        metadataClient.getMetadata({ timeout: timeoutMs }, cb);
      });
      const wanted = new Set(topics);
      return new Map(md.topics.filter((t) => wanted.has(t.name)).map((t) => [t.name, t.partitions.length]));
    },
    async listTopics(timeoutMs = 10_000) {
      return call<string[]>((cb) => admin.listTopics({ timeout: timeoutMs }, cb as never));
    },
    async describeGroup(groupId, timeoutMs = 10_000) {
      const res = await call<Kafka.GroupDescriptions>((cb) =>
        admin.describeGroups([groupId], { timeout: timeoutMs }, cb),
      );
      const g = res.groups[0];
      if (!g) return { groupId, state: 'Unknown', members: [] };
      // A group-level error (its coordinator unavailable, ...) says nothing about the members.
      if (g.error) throw classifyKafkaError(g.error, 'admin');
      return {
        groupId,
        state: STATES[g.state] ?? 'Unknown',
        members: g.members.map((m) => ({
          memberId: m.memberId,
          clientId: m.clientId,
          partitions: (m.assignment?.topicPartitions ?? []).map(({ topic, partition }) => ({
            topic,
            partition,
          })),
        })),
      };
    },
    /**
     * Asked through a consumer of the group that never joins it, not through the Admin API: the
     * Admin API's ListConsumerGroupOffsets dereferences a NULL consumer group in librdkafka when the
     * coordinator moved (NOT_COORDINATOR; librdkafka #5040, confluent-kafka-javascript #374), which
     * crashed the verifier right after a broker restart.
     */
    async groupOffsets(groupId, topics, timeoutMs = 10_000) {
      const parts: { topic: string; partition: number }[] = [];
      for (const topic of topics) {
        for (const w of await this.watermarks(topic, timeoutMs))
          parts.push({ topic, partition: w.partition });
      }
      const reader = new Kafka.KafkaConsumer(
        {
          'bootstrap.servers': bootstrapServers,
          'client.id': `${clientId}-offsets`,
          'group.id': groupId,
          'enable.auto.commit': false,
          // Otherwise OffsetFetch requires stable offsets (KIP-447) and waits out every open
          // transaction of the group; the Admin API's default answers with what is committed.
          'isolation.level': 'read_uncommitted',
        },
        {},
      );
      await call<unknown>((cb) => reader.connect({ timeout: timeoutMs }, cb));
      try {
        const tps = await call<Kafka.TopicPartitionOffset[]>((cb) => reader.committed(parts, timeoutMs, cb));
        // No committed offset comes back as undefined (or negative); the contract says OFFSET_INVALID.
        return tps.map(({ topic, partition, offset }) => ({
          topic,
          partition,
          offset: offset === undefined || offset < 0 ? OFFSET_INVALID : offset,
        }));
      } finally {
        await new Promise<void>((resolve) => reader.disconnect(() => resolve()));
      }
    },
    async watermarks(topic, timeoutMs = 10_000) {
      await metadata();
      const md = await call<Kafka.Metadata>((cb) => {
        metadataClient.getMetadata({ topic, timeout: timeoutMs }, cb);
      });
      const t = md.topics.find((x) => x.name === topic);
      if (!t) throw new Error(`topic ${topic} not found`);
      const out: { partition: number; low: number; high: number }[] = [];
      for (const p of [...t.partitions].sort((a, b) => a.id - b.id)) {
        const w = await call<Kafka.WatermarkOffsets>((cb) => {
          metadataClient.queryWatermarkOffsets(topic, p.id, timeoutMs, cb);
        });
        out.push({ partition: p.id, low: w.lowOffset, high: w.highOffset });
      }
      return out;
    },
    close() {
      admin.disconnect();
      // Only a connected client is disconnected: the binding releases one whose connect failed
      // itself, and disconnecting it again throws ("Producer not connected").
      void metadataReady?.then(
        () => metadataClient.disconnect(),
        () => undefined,
      );
    },
  };
}
