import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TimerSchedule } from '../../../src/runtime/state/timer-schedule.ts';

describe('TimerSchedule', () => {
  it('fires a partition one interval after it became ready, then one interval after each call', () => {
    const t = new TimerSchedule(100);
    t.start(0, 1000);
    t.start(1, 1050);
    assert.deepEqual(t.due(1099), []);
    assert.deepEqual(t.due(1100), [0]);
    assert.deepEqual(t.due(1200), [0, 1], 'longest overdue first');
    t.fired(0, 1200);
    assert.deepEqual(t.due(1200), [1]);
    assert.equal(t.nextDueAt(), 1150);
  });

  it('does not make up for missed intervals after a late call', () => {
    const t = new TimerSchedule(100);
    t.start(0, 0);
    t.fired(0, 1000);
    assert.deepEqual(t.due(1099), []);
    assert.deepEqual(t.due(1100), [0]);
  });

  it('never fires a stopped (revoked, restoring) partition, even if a late fired() comes', () => {
    const t = new TimerSchedule(100);
    t.start(0, 0);
    t.stop(0);
    t.fired(0, 50);
    assert.deepEqual(t.due(10_000), []);
    assert.equal(t.nextDueAt(), undefined);
  });

  it('rejects a non-positive interval', () => {
    assert.throws(() => new TimerSchedule(0), /> 0/);
  });
});
