import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Registry } from 'prom-client';
import type { AdminPort, TopicSpec } from '../../../src/kafka/admin.ts';
import type { ChangelogReader } from '../../../src/kafka/changelog-reader.ts';
import type { FetchedRecord } from '../../../src/kafka/records.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import type { Clock } from '../../../src/runtime/clock.ts';
import { StateEngine } from '../../../src/runtime/state/state-engine.ts';

const root = mkdtempSync(join(tmpdir(), 'hamstring-engine-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** Two input partitions, their changelogs missing: prepare creates them (and records that it did). */
function fakeAdmin(created: string[]): AdminPort {
  return {
    listTopics: () => Promise.resolve(['in']),
    watermarks: () =>
      Promise.resolve([
        { partition: 0, low: 0, high: 0 },
        { partition: 1, low: 0, high: 0 },
      ]),
    createTopics: (specs: TopicSpec[]) => {
      created.push(...specs.map((s) => s.topic));
      return Promise.resolve();
    },
  } as unknown as AdminPort;
}

/** A changelog of one record per partition, whose reads wait until `release()`. */
function gatedReader() {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const reader: ChangelogReader = {
    watermarks: (tps) => Promise.resolve(tps.map((tp) => ({ ...tp, low: 0, high: 1 }))),
    async read(ranges, onRecords, signal) {
      await gate;
      signal?.throwIfAborted();
      const records: FetchedRecord[] = ranges.map((r) => ({
        topic: r.topic,
        partition: r.partition,
        offset: 0,
        key: Buffer.from('k'),
        value: Buffer.from(String(r.partition + 10)),
        headers: {},
        timestamp: undefined,
      }));
      onRecords(records);
      return new Map(ranges.map((r) => [`${r.topic}:${r.partition}`, 1]));
    },
    close: () => Promise.resolve(),
  };
  return { reader, release };
}

function clockAt(now: { t: number }): Clock {
  return { now: () => now.t, sleep: () => Promise.resolve() };
}

async function engineWith(reader: ChangelogReader, now: { t: number }, instance: string) {
  const created: string[] = [];
  const e = new StateEngine({
    stage: { name: 's', inputTopics: ['in'], stores: { counts: {} }, timer: { intervalMs: 100 } },
    groupId: 'g',
    instanceId: instance,
    bootstrapServers: 'unused:9092',
    settings: { dir: root, replicationFactor: 1 },
    apiTimeoutMs: 1_000,
    clock: clockAt(now),
    log: silentLogger(),
    registry: new Registry(),
    openReader: () => Promise.resolve(reader),
  });
  await e.prepare(fakeAdmin(created));
  return { e, created };
}

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
