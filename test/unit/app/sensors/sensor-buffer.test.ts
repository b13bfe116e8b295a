import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SensorBuffer } from '../../../../src/app/sensors/sensor-buffer.ts';

test('lines are taken below capacity and come out oldest first', () => {
  const b = new SensorBuffer<number>({ capacity: 10, maxPauseMs: 1000 });
  for (let i = 0; i < 9; i += 1) assert.equal(b.offer(i, 0), 'taken');
  assert.deepEqual(b.take(4).items, [0, 1, 2, 3]);
  b.offer(9, 0);
  assert.deepEqual(b.take(100).items, [4, 5, 6, 7, 8, 9]);
  assert.equal(b.length, 0);
});

test('full: the source is told to pause, then lines are dropped after max pause until half drained', () => {
  const b = new SensorBuffer<number>({ capacity: 10, maxPauseMs: 1000, overflow: 3 });
  for (let i = 0; i < 9; i += 1) b.offer(i, 0);
  assert.equal(b.offer(9, 0), 'full');
  assert.equal(b.state, 'paused');
  // The rest of a socket read still fits, up to the overflow; beyond it, drops.
  assert.deepEqual(
    [b.offer(10, 1), b.offer(11, 1), b.offer(12, 1), b.offer(13, 1)],
    ['full', 'full', 'full', 'dropped'],
  );
  assert.equal(b.tick(999), false, 'not yet');
  assert.equal(b.tick(1000), true, 'paused too long: read again');
  assert.equal(b.state, 'dropping');
  assert.equal(b.offer(14, 1001), 'dropped');
  assert.equal(b.dropped, 2);
  // Draining to 7 left is not enough; to 5 (half) reopens.
  assert.equal(b.take(6).reopened, false);
  assert.equal(b.state, 'dropping');
  const r = b.take(2);
  assert.equal(r.reopened, true);
  assert.equal(b.state, 'open');
  assert.equal(b.offer(15, 2000), 'taken');
  assert.deepEqual(b.take(100).items, [8, 9, 10, 11, 12, 15]);
});

test('a pause that drains in time never drops', () => {
  const b = new SensorBuffer<number>({ capacity: 4, maxPauseMs: 1000 });
  for (let i = 0; i < 4; i += 1) b.offer(i, 0);
  assert.equal(b.state, 'paused');
  assert.equal(b.take(2).reopened, true);
  assert.equal(b.tick(5000), false);
  assert.equal(b.dropped, 0);
});
