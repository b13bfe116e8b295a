import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AssignmentEpochs, type EpochCause } from '../../../src/runtime/assignment-epochs.ts';

const p0 = { topic: 'in', partition: 0 };
const p1 = { topic: 'in', partition: 1 };
const p2 = { topic: 'in', partition: 2 };

describe('AssignmentEpochs', () => {
  it('starts at epoch 0 with nothing assigned', () => {
    const e = new AssignmentEpochs();
    assert.equal(e.current, 0);
    assert.deepEqual(e.assigned(), []);
  });

  it('starts a new epoch on assign and adds the partitions', () => {
    const e = new AssignmentEpochs();
    e.assign([p0, p1]);
    assert.equal(e.current, 1);
    assert.deepEqual(e.assigned(), [p0, p1]);
    e.assign([p2]); // cooperative: incremental
    assert.equal(e.current, 2);
    assert.deepEqual(e.assigned(), [p0, p1, p2]);
  });

  it('invalidates the epoch on revoke and drops the revoked partitions', () => {
    const e = new AssignmentEpochs();
    e.assign([p0, p1]);
    e.revoke([p1]);
    assert.equal(e.current, 2);
    assert.equal(e.isAssigned(p0), true);
    assert.equal(e.isAssigned(p1), false);
  });

  it('invalidates the epoch on lost and drops the lost partitions', () => {
    const e = new AssignmentEpochs();
    e.assign([p0, p1]);
    e.lost([p0, p1]);
    assert.equal(e.current, 2);
    assert.deepEqual(e.assigned(), []);
  });

  it('lets a batch of the current epoch from assigned partitions commit', () => {
    const e = new AssignmentEpochs();
    e.assign([p0, p1]);
    assert.equal(e.staleReason(e.current, [p0, p1]), undefined);
  });

  it('marks a batch fetched under an older epoch stale', () => {
    const e = new AssignmentEpochs();
    e.assign([p0, p1]);
    const epoch = e.current;
    e.revoke([p1]);
    e.assign([p1]); // even with the same partitions back, the generation changed
    assert.equal(e.staleReason(epoch, [p0]), `fetched under epoch 1, current epoch 3`);
  });

  it('marks a batch stale when one of its partitions is no longer assigned', () => {
    const e = new AssignmentEpochs();
    e.assign([p0]);
    assert.equal(e.staleReason(e.current, [p0, p2]), 'partition in:2 is no longer assigned');
  });

  it('resets to nothing assigned with a new epoch, for a fresh consumer', () => {
    const e = new AssignmentEpochs();
    e.assign([p0, p1]);
    const before = e.current;
    e.reset();
    assert.equal(e.current, before + 1);
    assert.deepEqual(e.assigned(), []);
    assert.match(e.staleReason(before, [p0]) ?? '', /fetched under epoch/);
  });

  it('tells listeners every change with its cause and partitions, until unsubscribed', () => {
    const e = new AssignmentEpochs();
    const seen: [EpochCause, string[]][] = [];
    const off = e.onChange((cause, tps) => seen.push([cause, tps.map((t) => `${t.topic}:${t.partition}`)]));
    e.assign([p0, p1]);
    e.revoke([p1]);
    e.lost([p0]);
    e.assign([p2]);
    e.reset();
    off();
    e.assign([p0]);
    assert.deepEqual(seen, [
      ['assign', ['in:0', 'in:1']],
      ['revoke', ['in:1']],
      ['lost', ['in:0']],
      ['assign', ['in:2']],
      ['reset', ['in:2']],
    ]);
  });
});
