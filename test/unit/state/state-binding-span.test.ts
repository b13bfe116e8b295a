import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AssignmentEpochs } from '../../../src/runtime/assignment-epochs.ts';
import { CommittedFloor } from '../../../src/runtime/committed-floor.ts';
import { StateBinding } from '../../../src/runtime/state/state-binding.ts';
import { engineWith, gatedReader } from '../../support/state-engine-fakes.ts';

const root = mkdtempSync(join(tmpdir(), 'hamstring-binding-span-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** A binding over partition 0, restored with `k` = 10 in store `counts`. */
async function bound(instance: string) {
  const { reader, release } = gatedReader();
  release();
  const { e } = await engineWith(root, reader, { t: 0 }, instance);
  e.assign([0]);
  await e.restored();
  const b = new StateBinding(e, {
    epochs: new AssignmentEpochs(),
    consumer: () => undefined,
    committedFloor: new CommittedFloor(),
    apiTimeoutMs: 1_000,
  });
  const counts = () => b.partitionState(0).store<number>('counts');
  /** The committed view, as a transaction begun with none open reads it. */
  const committedK = () => {
    const t = e.begin();
    const v = e.partitionState(t, 0).store<number>('counts').get('k');
    e.aborted(t);
    return v;
  };
  const changelog = () => b.changelogRecords().map((r) => [r.key, String(r.value)]);
  /** A whole batch that wrote `k` = `value` and joined the open Kafka transaction. */
  const joinedBatch = (kafkaTxnOpen: boolean, value: number) => {
    b.beginBatch(kafkaTxnOpen);
    counts().put('k', value);
    b.joined();
    b.endBatch();
  };
  return { e, b, counts, committedK, changelog, joinedBatch };
}

describe('store changes follow a Kafka transaction that spans several batches', () => {
  it('batches that joined the open transaction share one state transaction; its changelog is their last write per key', async () => {
    const { e, b, counts, committedK, changelog } = await bound('join');
    b.beginBatch(false);
    counts().put('k', 11);
    counts().put('a', 1);
    b.joined();
    b.endBatch();
    b.beginBatch(true);
    assert.equal(counts().get('k'), 11, 'the second batch reads the first one’s change');
    counts().put('k', 12);
    b.joined();
    b.endBatch();
    assert.deepEqual(changelog().sort(), [
      ['a', '1'],
      ['k', '12'],
    ]);
    b.committing();
    b.committed(new Map());
    assert.equal(committedK(), 12);
    await e.close();
  });

  it('a batch that does not join (stale, failed) loses its own changes only; the span keeps the earlier ones', async () => {
    const { e, b, counts, changelog, joinedBatch } = await bound('partial');
    joinedBatch(false, 11);
    b.beginBatch(true);
    counts().put('k', 50);
    counts().put('b', 2);
    b.endBatch();
    assert.deepEqual(changelog(), [['k', '11']]);
    b.beginBatch(true);
    assert.equal(counts().get('k'), 11);
    assert.equal(counts().has('b'), false);
    b.endBatch();
    await e.close();
  });

  it('rollbackBatch undoes the running batch, not the batches before it in the span', async () => {
    const { e, b, counts, changelog, joinedBatch } = await bound('rollback');
    joinedBatch(false, 11);
    b.beginBatch(true);
    counts().put('k', 77);
    b.rollbackBatch();
    assert.equal(counts().get('k'), 11);
    assert.deepEqual(changelog(), [['k', '11']]);
    b.endBatch();
    await e.close();
  });

  it('an abort of the span drops every batch’s changes, and the next batch starts from the committed view', async () => {
    const { e, b, counts, committedK, joinedBatch } = await bound('abort');
    joinedBatch(false, 11);
    b.beginBatch(true);
    counts().put('k', 12);
    b.aborted(); // the recovery aborts the Kafka transaction while this batch runs
    b.endBatch();
    assert.equal(committedK(), 10);
    b.beginBatch(false);
    assert.equal(counts().get('k'), 10);
    assert.deepEqual(b.changelogRecords(), []);
    b.endBatch();
    await e.close();
  });

  it('a span whose Kafka transaction died without an abort (producer reconnected) is not continued', async () => {
    const { e, b, counts, joinedBatch } = await bound('gone');
    joinedBatch(false, 11);
    b.beginBatch(false); // no Kafka transaction open any more
    assert.equal(counts().get('k'), 10);
    assert.deepEqual(b.changelogRecords(), []);
    b.endBatch();
    await e.close();
  });

  it('without joining (one transaction per batch) every batch begins fresh, as before', async () => {
    const { e, b, counts } = await bound('single');
    b.beginBatch(true);
    counts().put('k', 11);
    b.endBatch();
    b.beginBatch(true);
    assert.equal(counts().get('k'), 10);
    b.endBatch();
    await e.close();
  });
});
