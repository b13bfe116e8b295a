import assert from 'node:assert/strict';
import { test } from 'node:test';
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
