import type { AdminPort, TopicSpec } from '../../kafka/admin.ts';
import { HamstringError } from '../../errors/hamstring-error.ts';

/** Tombstones stay readable this long after compaction; a local copy older than that is not trusted. */
export const TOMBSTONE_RETENTION_MS = 24 * 60 * 60 * 1000;

/** A stateful stage whose topics do not line up: the worker must not start. */
export class StateConfigurationError extends HamstringError {
  override readonly name = 'StateConfigurationError';
  readonly code = 'STATE_CONFIGURATION';
}

/** How changelog topics are created (from `runtime.state` in config.yaml). */
export interface ChangelogTopicSettings {
  /** -1 takes the broker's default.replication.factor. */
  replicationFactor: number;
  /** Unset leaves the broker's default min.insync.replicas. */
  minInsyncReplicas?: number;
}

/** The changelog of one store of one consumer group (as Kafka Streams names it). */
export function changelogTopic(groupId: string, store: string): string {
  return `${groupId}-${store}-changelog`;
}

/** A compacted topic with one partition per input partition. */
export function changelogSpec(topic: string, partitions: number, s: ChangelogTopicSettings): TopicSpec {
  return {
    topic,
    partitions,
    replicationFactor: s.replicationFactor,
    config: {
      'cleanup.policy': 'compact',
      'delete.retention.ms': String(TOMBSTONE_RETENTION_MS),
      ...(s.minInsyncReplicas !== undefined ? { 'min.insync.replicas': String(s.minInsyncReplicas) } : {}),
    },
  };
}

/**
 * The one partition count the stage's stores have, or the error that names the topics that differ:
 * stores are partitioned like the input, so every input topic and every existing changelog must agree.
 */
export function checkPartitionCounts(
  stage: string,
  inputs: ReadonlyMap<string, number>,
  changelogs: ReadonlyMap<string, number | undefined>,
): number {
  const [first, ...rest] = [...inputs];
  if (!first) throw new StateConfigurationError(`stage ${stage} declares stores but has no input topic`);
  const [firstTopic, count] = first;
  for (const [topic, n] of rest) {
    if (n !== count)
      throw new StateConfigurationError(
        `configuration error: stage ${stage} has state stores, so its input topics must have the same ` +
          `partition count, but input topic ${firstTopic} has ${count} and input topic ${topic} has ${n}`,
      );
  }
  for (const [topic, n] of changelogs) {
    if (n !== undefined && n !== count)
      throw new StateConfigurationError(
        `configuration error: changelog topic ${topic} has ${n} partitions but input topic ${firstTopic} ` +
          `of stage ${stage} has ${count}; stores are partitioned like the input, so recreate the ` +
          `changelog with ${count} partitions or restore the input's partition count`,
      );
  }
  return count;
}

/**
 * Creates the missing changelogs of a stage and checks the partition counts of all of them against
 * the input. Returns the partition count and the changelog topic per store.
 */
export async function ensureChangelogs(args: {
  admin: AdminPort;
  stage: string;
  groupId: string;
  stores: readonly string[];
  inputTopics: readonly string[];
  settings: ChangelogTopicSettings;
  timeoutMs: number;
}): Promise<{ partitions: number; topics: Map<string, string> }> {
  const { admin } = args;
  const count = async (topic: string, known: Set<string>) =>
    known.has(topic) ? (await admin.watermarks(topic, args.timeoutMs)).length : undefined;
  const known = new Set(await admin.listTopics(args.timeoutMs));
  const inputs = new Map<string, number>();
  for (const t of args.inputTopics) inputs.set(t, (await count(t, known)) ?? 0);
  const topics = new Map(args.stores.map((s) => [s, changelogTopic(args.groupId, s)] as const));
  const existing = new Map<string, number | undefined>();
  for (const t of topics.values()) existing.set(t, await count(t, known));
  const partitions = checkPartitionCounts(args.stage, inputs, existing);
  const missing = [...existing].filter(([, n]) => n === undefined).map(([t]) => t);
  if (missing.length > 0) {
    await admin.createTopics(
      missing.map((t) => changelogSpec(t, partitions, args.settings)),
      args.timeoutMs,
    );
    // A topic created moments ago can be missing from the listing and then already exist here
    // (creating it is then a no-op): its real partition count is checked like any other.
    const created = await admin.partitionCounts(missing, args.timeoutMs);
    for (const t of missing) existing.set(t, created.get(t) ?? partitions);
    checkPartitionCounts(args.stage, inputs, existing);
  }
  return { partitions, topics };
}
