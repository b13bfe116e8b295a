import assert from 'node:assert/strict';
import { test } from 'node:test';
import { partitionsBehind, QuietWatch, type PartitionProgress } from '../../../src/monitoring/agent-drain.ts';

const p = (low: number, high: number, committed: number, partition = 0): PartitionProgress => ({
  topic: 'clickhouse_alerts',
  partition,
  low,
  high,
  committed,
});

test('a partition read to its last transaction marker, or empty, is drained; one with rows left is behind', () => {
  const behind = partitionsBehind([
    p(0, 12, 11, 0), // last record at 10, its commit marker at 11
    p(0, 12, 12, 1),
    p(0, 0, -1001, 2), // never written
    p(7, 7, -1001, 3), // emptied by retention
    p(0, 12, 10, 4), // the record at 10 not committed yet
    p(0, 5, -1001, 5), // rows, nothing committed
  ]);
  assert.deepEqual(
    behind.map((x) => x.partition),
    [4, 5],
  );
});

test('partitions behind count as drained once they stood still for the quiet time, not while they move', () => {
  const watch = new QuietWatch(8000);
  assert.equal(watch.quiet([p(0, 20, 10)], 0), false);
  assert.equal(watch.quiet([p(0, 20, 15)], 5000), false, 'moved: the agent is still reading');
  assert.equal(watch.quiet([p(0, 20, 15)], 12_000), false);
  assert.equal(watch.quiet([p(0, 20, 15)], 13_000), true, 'still for 8 s: an aborted tail');
  assert.equal(watch.quiet([p(0, 21, 15), p(0, 20, 15, 1)], 14_000), false, 'another partition behind');
});
