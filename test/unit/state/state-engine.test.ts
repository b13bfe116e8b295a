import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { engineWith as engineIn, gatedReader } from '../../support/state-engine-fakes.ts';
import type { ChangelogReader } from '../../../src/kafka/changelog-reader.ts';

const root = mkdtempSync(join(tmpdir(), 'hamstring-engine-'));
after(() => rmSync(root, { recursive: true, force: true }));

const engineWith = (reader: ChangelogReader, now: { t: number }, instance: string) =>
  engineIn(root, reader, now, instance);

describe('StateEngine', () => {
  it('creates the missing changelog, named after the group and the store', async () => {
    const { e, created } = await engineWith(gatedReader().reader, { t: 0 }, 'a');
    assert.deepEqual(created, ['g-counts-changelog']);
    await e.close();
  });

  it('a partition is ready only once restored; one dropped while restoring never is, nor fires a timer', async () => {
    const now = { t: 1_000 };
    const { reader, release } = gatedReader();
    const { e } = await engineWith(reader, now, 'b');
    const ready: number[][] = [];
    e.assign([0, 1], (ps) => ready.push(ps));
    assert.deepEqual(e.restoring().sort(), [0, 1]);
    assert.equal(e.isReady(0), false);
    e.drop([1]);
    release();
    await e.restored();
    assert.deepEqual(ready, [[0]]);
    assert.equal(e.isReady(1), false);
    now.t += 1_000;
    assert.deepEqual(e.dueTimers(now.t), [0]);
    const txn = e.begin();
    assert.equal(
      e.partitionState(txn, 0).store<number>('counts').get('k'),
      10,
      'restored from the changelog',
    );
    assert.throws(() => e.partitionState(txn, 1), /not assigned or still restoring/);
    e.aborted(txn);
    await e.close();
  });

  it('committed changes become the committed view; aborted ones never do', async () => {
    const { reader, release } = gatedReader();
    release();
    const { e } = await engineWith(reader, { t: 0 }, 'c');
    e.assign([0]);
    await e.restored();
    const aborted = e.begin();
    e.partitionState(aborted, 0).store<number>('counts').put('k', 99);
    assert.deepEqual(
      e.changelogRecords(aborted).map((r) => [r.topic, r.partition, r.key, String(r.value)]),
      [['g-counts-changelog', 0, 'k', '99']],
    );
    e.aborted(aborted);
    const committed = e.begin();
    const store = e.partitionState(committed, 0).store<number>('counts');
    assert.equal(store.get('k'), 10);
    store.delete('k');
    assert.deepEqual(
      e.changelogRecords(committed).map((r) => r.value),
      [null],
      'a delete is a tombstone',
    );
    e.committed(committed, new Map());
    const after = e.begin();
    assert.equal(e.partitionState(after, 0).store<number>('counts').has('k'), false);
    e.aborted(after);
    await e.close();
  });
});
