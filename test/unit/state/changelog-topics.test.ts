import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AdminPort } from '../../../src/kafka/admin.ts';
import {
  changelogSpec,
  changelogTopic,
  checkPartitionCounts,
  ensureChangelogs,
  StateConfigurationError,
} from '../../../src/runtime/state/changelog-topics.ts';

describe('changelog topics', () => {
  it('are named after the group and the store, compacted, with the configured replication', () => {
    assert.equal(
      changelogTopic('log_collection.collector', 'batches'),
      'log_collection.collector-batches-changelog',
    );
    const spec = changelogSpec('t', 6, { replicationFactor: 3, minInsyncReplicas: 2 });
    assert.equal(spec.partitions, 6);
    assert.equal(spec.replicationFactor, 3);
    assert.equal(spec.config?.['cleanup.policy'], 'compact');
    assert.equal(spec.config?.['min.insync.replicas'], '2');
    assert.equal(changelogSpec('t', 1, { replicationFactor: -1 }).config?.['min.insync.replicas'], undefined);
  });

  it('a changelog whose partition count differs from the input is a configuration error naming both', () => {
    assert.throws(
      () => checkPartitionCounts('s', new Map([['in', 4]]), new Map([['g-counts-changelog', 2]])),
      (e: unknown) =>
        e instanceof StateConfigurationError &&
        /changelog topic g-counts-changelog has 2 partitions but input topic in of stage s has 4/.test(
          e.message,
        ),
    );
  });

  it('input topics of a stateful stage must agree with each other', () => {
    assert.throws(
      () =>
        checkPartitionCounts(
          's',
          new Map([
            ['a', 4],
            ['b', 3],
          ]),
          new Map(),
        ),
      /input topic a has 4 and input topic b has 3/,
    );
  });

  it('missing changelogs take the input partition count', () => {
    assert.equal(checkPartitionCounts('s', new Map([['a', 4]]), new Map([['c', undefined]])), 4);
  });

  it('a changelog the listing missed, found existing with another partition count when created, fails the start', async () => {
    const admin = {
      listTopics: () => Promise.resolve(['in']),
      watermarks: () => Promise.resolve([0, 1, 2, 3].map((partition) => ({ partition, low: 0, high: 0 }))),
      // The topic already exists: creating it is a no-op (TOPIC_ALREADY_EXISTS is not an error).
      createTopics: () => Promise.resolve(),
      partitionCounts: (topics: readonly string[]) => Promise.resolve(new Map(topics.map((t) => [t, 2]))),
    } as unknown as AdminPort;
    await assert.rejects(
      ensureChangelogs({
        admin,
        stage: 's',
        groupId: 'g',
        stores: ['counts'],
        inputTopics: ['in'],
        settings: { replicationFactor: 1 },
        timeoutMs: 1_000,
      }),
      (e: unknown) =>
        e instanceof StateConfigurationError && e.message.includes('g-counts-changelog has 2 partitions'),
    );
  });
});
