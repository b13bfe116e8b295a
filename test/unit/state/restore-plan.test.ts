import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TOMBSTONE_RETENTION_MS } from '../../../src/runtime/state/changelog-topics.ts';
import { planRestore } from '../../../src/runtime/state/restore-plan.ts';

const now = 1_000_000_000_000;

describe('planRestore', () => {
  it('restores only the tail past a trusted checkpoint', () => {
    assert.deepEqual(planRestore({ offset: 40, writtenAt: now - 1000 }, { low: 0, high: 50 }, now), {
      kind: 'tail',
      from: 40,
    });
  });

  it('restores in full without a checkpoint, from the log start', () => {
    assert.deepEqual(planRestore(undefined, { low: 7, high: 50 }, now), {
      kind: 'full',
      from: 7,
      reason: 'no-checkpoint',
    });
  });

  it('wipes a copy whose checkpoint is newer than the changelog end (topic recreated)', () => {
    assert.equal(planRestore({ offset: 60, writtenAt: now }, { low: 0, high: 50 }, now).kind, 'full');
  });

  it('wipes a copy whose checkpoint lies before the log start (records it never saw are gone)', () => {
    const plan = planRestore({ offset: 3, writtenAt: now }, { low: 10, high: 50 }, now);
    assert.deepEqual(plan, { kind: 'full', from: 10, reason: 'behind-log-start' });
  });

  it('wipes a copy older than the tombstone retention (a delete may have been compacted away)', () => {
    const plan = planRestore(
      { offset: 5, writtenAt: now - TOMBSTONE_RETENTION_MS },
      { low: 0, high: 50 },
      now,
    );
    assert.deepEqual(plan, { kind: 'full', from: 0, reason: 'too-old' });
  });

  it('an empty changelog and a checkpoint at its end need no read', () => {
    assert.deepEqual(planRestore({ offset: 50, writtenAt: now }, { low: 0, high: 50 }, now), {
      kind: 'tail',
      from: 50,
    });
  });
});
