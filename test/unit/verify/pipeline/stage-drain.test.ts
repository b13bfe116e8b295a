import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PartitionProgress } from '../../../../src/monitoring/agent-drain.ts';
import {
  describeLagging,
  laggingGroups,
  recordsBehind,
  SettleWatch,
  type GroupProgress,
} from '../../../../src/verify/pipeline/stage-drain.ts';

const part = (topic: string, high: number, committed: number, low = 0): PartitionProgress => ({
  topic,
  partition: 0,
  low,
  high,
  committed,
});
const group = (
  label: string,
  partitions: PartitionProgress[],
  members = 1,
  state = 'Stable',
): GroupProgress => ({
  label,
  group: `hamstring-${label}`,
  state,
  members,
  partitions,
});
const plain = new Set(['logserver_in']);

test("a stage's topic ends at its last transaction's marker, the feed's plain topic at its high watermark", () => {
  assert.equal(recordsBehind(part('batches', 12, 11), false), 0);
  assert.equal(recordsBehind(part('batches', 12, 10), false), 1);
  assert.equal(recordsBehind(part('batches', 12, -1001), false), 11);
  assert.equal(recordsBehind(part('logserver_in', 12, 11), true), 1);
  assert.equal(recordsBehind(part('logserver_in', 12, 12), true), 0);
  assert.equal(recordsBehind(part('batches', 7, -1001, 7), false), 0, 'emptied by retention');
});

test('a group at its end but without a member (its process restarting) or rebalancing is not done', () => {
  const lagging = laggingGroups(
    [
      group('logserver', [part('logserver_in', 100, 100)]),
      group('collector', [part('lines', 50, 49)], 0, 'Empty'),
      group('prefilter', [part('batches', 20, 19)], 1, 'PreparingRebalance'),
      group('inspector', [part('filtered', 20, 12)]),
      group('detector', [part('suspicious', 30, 29)]),
    ],
    plain,
  );
  assert.deepEqual(
    lagging.map((g) => [g.label, g.inactive, g.behind.map((b) => b.records)]),
    [
      ['collector', 'group Empty', []],
      ['prefilter', 'group PreparingRebalance', []],
      ['inspector', undefined, [7]],
    ],
  );
  assert.deepEqual(describeLagging(lagging), [
    'collector (hamstring-collector): group Empty',
    'prefilter (hamstring-prefilter): group PreparingRebalance',
    'inspector (hamstring-inspector): filtered:0 7 records behind',
  ]);
});

test('a partition whose tail is known to be aborted rows counts as read, until it moves', () => {
  const tails = new Map([['batches\u00000', { committed: 10, high: 14 }]]);
  assert.deepEqual(laggingGroups([group('prefilter', [part('batches', 14, 10)])], plain, tails), []);
  assert.equal(laggingGroups([group('prefilter', [part('batches', 18, 10)])], plain, tails).length, 1);
});

test('the pipeline is settled only after every group stayed at its end for the whole stay', () => {
  const watch = new SettleWatch(10_000);
  const behind = laggingGroups([group('collector', [part('lines', 50, 49)], 0, 'Empty')], plain);
  assert.equal(watch.settled([], 0), false);
  assert.equal(watch.settled([], 9_999), false);
  // The restarted collector left its group, then sent the lines of its buffer: the wait starts over.
  assert.equal(watch.settled(behind, 10_500), false);
  assert.equal(watch.settled([], 11_000), false);
  assert.equal(watch.settled([], 20_999), false);
  assert.equal(watch.settled([], 21_000), true);
});
