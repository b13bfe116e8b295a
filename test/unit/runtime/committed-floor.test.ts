import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FetchedRecord } from '../../../src/kafka/records.ts';
import { CommittedFloor } from '../../../src/runtime/committed-floor.ts';

test('the floor is the highest offset committed per partition, and lifts only reports below it', () => {
  const floor = new CommittedFloor();
  floor.record([
    { topic: 't', partition: 0, offset: 10 },
    { topic: 't', partition: 1, offset: 5 },
  ]);
  floor.record([{ topic: 't', partition: 0, offset: 7 }]);
  assert.equal(floor.of({ topic: 't', partition: 0 }), 10, 'an older commit never lowers it');
  const { positions, raised } = floor.apply([
    { topic: 't', partition: 0, offset: -1001 },
    { topic: 't', partition: 1, offset: 8 },
    { topic: 't', partition: 2, offset: -1001 },
  ]);
  assert.deepEqual(positions, [
    { topic: 't', partition: 0, offset: 10 },
    { topic: 't', partition: 1, offset: 8 },
    { topic: 't', partition: 2, offset: -1001 },
  ]);
  assert.deepEqual(raised, [{ partition: 't:0', reported: -1001, floor: 10 }]);
});

test('a batch is screened per record: records below the floor of their partition are dropped', () => {
  const floor = new CommittedFloor();
  floor.record([
    { topic: 't', partition: 0, offset: 10 },
    { topic: 't', partition: 2, offset: 50 },
  ]);
  const rec = (partition: number, offset: number): FetchedRecord => ({
    topic: 't',
    partition,
    offset,
    key: null,
    value: null,
    timestamp: 0,
    headers: {},
  });
  const batch = [rec(0, 8), rec(1, 3), rec(2, 0), rec(0, 9), rec(0, 10), rec(1, 4), rec(2, 1)];
  const { kept, below } = floor.screen(batch);
  assert.deepEqual(
    kept.map((r) => `${r.partition}:${r.offset}`),
    ['1:3', '0:10', '1:4'],
    'a partition without a floor is kept whole, and t:0 from its floor on',
  );
  assert.deepEqual(below, [
    { floor: { topic: 't', partition: 0, offset: 10 }, fetched: 8, dropped: 2, seek: false },
    { floor: { topic: 't', partition: 2, offset: 50 }, fetched: 0, dropped: 2, seek: true },
  ]);
  const above = [rec(0, 10), rec(0, 11)];
  assert.equal(floor.screen(above).kept, above, 'a batch at or above the floor passes as it is');
});
