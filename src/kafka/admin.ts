import Kafka from '@confluentinc/kafka-javascript';
import { classifyKafkaError } from './classify.ts';
import { readGroupOffsets } from './admin-group-offsets.ts';
import { MetadataClient } from './admin-metadata.ts';
import type { TopicPartitionOffset } from './records.ts';
import { connectionProperties, kafkaSecurity } from './security.ts';

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
  /** The member's address as the group coordinator sees it: the machine it runs on. */
  host: string;
  partitions: { topic: string; partition: number }[];
}

export interface GroupState {
  groupId: string;
  /** Stable, PreparingRebalance, CompletingRebalance, Empty, Dead, Unknown. */
  state: string;
  members: GroupMember[];
  /** Node id of the broker coordinating the group, when the description names one. */
  coordinator?: number;
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
  const admin = Kafka.AdminClient.create(connectionProperties(bootstrapServers, clientId));
  const meta = new MetadataClient(bootstrapServers, `${clientId}-meta`);
  // Refused credentials then end a waiting call at once (see MetadataClient.guard).
  if (kafkaSecurity().protocol !== 'PLAINTEXT') meta.warmUp();
  const call = <T>(fn: (cb: (err: unknown, v: T) => void) => void) =>
    meta.guard(
      new Promise<T>((resolve, reject) =>
        fn((err, v) => (err ? reject(classifyKafkaError(err, 'admin')) : resolve(v))),
      ),
    );
  const TOPIC_EXISTS = Kafka.CODES.ERRORS.ERR_TOPIC_ALREADY_EXISTS;

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
      const md = await meta.metadata({ timeout: timeoutMs });
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
        ...(typeof g.coordinator?.id === 'number' ? { coordinator: g.coordinator.id } : {}),
        members: g.members.map((m) => ({
          memberId: m.memberId,
          clientId: m.clientId,
          host: m.clientHost.replace(/^\//, ''),
          partitions: (m.assignment?.topicPartitions ?? []).map(({ topic, partition }) => ({
            topic,
            partition,
          })),
        })),
      };
    },
    /** See {@link readGroupOffsets}: a consumer of the group that never joins it. */
    async groupOffsets(groupId, topics, timeoutMs = 10_000) {
      const parts: { topic: string; partition: number }[] = [];
      for (const topic of topics) {
        for (const w of await meta.watermarks(topic, timeoutMs))
          parts.push({ topic, partition: w.partition });
      }
      return readGroupOffsets({ bootstrapServers, clientId, groupId, timeoutMs }, parts);
    },
    watermarks: (topic, timeoutMs = 10_000) => meta.watermarks(topic, timeoutMs),
    close() {
      admin.disconnect();
      meta.close();
    },
  };
}
