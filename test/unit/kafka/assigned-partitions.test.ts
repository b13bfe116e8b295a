import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AssignedPartitions } from '../../../src/kafka/assigned-partitions.ts';
import type { TopicPartition } from '../../../src/kafka/records.ts';

const tp = (partition: number, topic = 'in'): TopicPartition => ({ topic, partition });

test('the list follows assignments, revocations and losses, and each event still reaches the listener after it', () => {
  const assigned = new AssignedPartitions();
  const seen: string[] = [];
  const listener = assigned.tracking({
    onAssign: (ps) => seen.push(`assign ${ps.length}, listed ${assigned.list().length}`),
    onRevoke: (ps) => seen.push(`revoke ${ps.length}, listed ${assigned.list().length}`),
    onLost: (ps) => seen.push(`lost ${ps.length}, listed ${assigned.list().length}`),
  });
  listener.onAssign([tp(0), tp(1), tp(2)]);
  listener.onRevoke([tp(1)]);
  assert.deepEqual(assigned.list(), [tp(0), tp(2)]);
  listener.onAssign([tp(1, 'other')]);
  assigned.add([tp(5)]); // a reader's own assignment
  listener.onLost([tp(0), tp(2), tp(1, 'other')]);
  assert.deepEqual(assigned.list(), [tp(5)]);
  assert.deepEqual(seen, [
    'assign 3, listed 3',
    'revoke 1, listed 2',
    'assign 1, listed 3',
    'lost 3, listed 1',
  ]);
});

test('a partition assigned twice is listed once, and offsets given with it are not kept', () => {
  const assigned = new AssignedPartitions();
  assigned.add([{ topic: 'in', partition: 0, offset: 42 } as TopicPartition]);
  assigned.add([tp(0)]);
  assert.deepEqual(assigned.list(), [tp(0)]);
});
