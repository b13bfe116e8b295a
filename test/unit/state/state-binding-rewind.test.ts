import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { ConsumerPort } from '../../../src/kafka/consumer.ts';
import type { FetchedRecord, TopicPartitionOffset } from '../../../src/kafka/records.ts';
import { AssignmentEpochs } from '../../../src/runtime/assignment-epochs.ts';
import { CommittedFloor } from '../../../src/runtime/committed-floor.ts';
import { StateBinding } from '../../../src/runtime/state/state-binding.ts';
import { engineWith, gatedReader } from '../../support/state-engine-fakes.ts';

const root = mkdtempSync(join(tmpdir(), 'hamstring-binding-rewind-'));
after(() => rmSync(root, { recursive: true, force: true }));

const record = (partition: number, offset: number): FetchedRecord => ({
  topic: 'in',
  partition,
  offset,
  key: Buffer.from('k'),
  value: Buffer.from('1'),
  headers: {},
  timestamp: undefined,
});

/**
 * Records fetched while a partition restored are rewound to the group's committed offset once it is
 * restored. Right after a commit the group may still report the offset before it (or none, read as
 * "from the beginning"): the rewind must not go below what this worker committed, or every record
 * since would be processed and committed a second time.
 */
test('a partition restored after early records rewinds to the group offset, never below its own commit', async () => {
  const { reader, release } = gatedReader();
  const { e } = await engineWith(root, reader, { t: 0 }, 'rewind');
  const epochs = new AssignmentEpochs();
  const floor = new CommittedFloor();
  const seeks: TopicPartitionOffset[] = [];
  const resumed: number[] = [];
  const consumer = {
    pause: () => undefined,
    resume: (tps: { partition: number }[]) => resumed.push(...tps.map((tp) => tp.partition)),
    // Partition 0: no offset reported though this worker committed 500; partition 1: ahead of it.
    committed: (tps: { topic: string; partition: number }[]) =>
      Promise.resolve(tps.map((tp) => ({ ...tp, offset: tp.partition === 0 ? -1001 : 900 }))),
    seek: (c: TopicPartitionOffset) => {
      seeks.push(c);
      return Promise.resolve();
    },
  } as unknown as ConsumerPort;
  const b = new StateBinding(e, {
    epochs,
    consumer: () => consumer,
    committedFloor: floor,
    apiTimeoutMs: 1_000,
  });
  floor.record([
    { topic: 'in', partition: 0, offset: 500 },
    { topic: 'in', partition: 1, offset: 800 },
  ]);
  const tps = [
    { topic: 'in', partition: 0 },
    { topic: 'in', partition: 1 },
  ];
  epochs.assign(tps);
  b.onEpochChange('assign', tps);
  assert.deepEqual(b.admit([record(0, 500), record(1, 900)]), [], 'records of restoring partitions wait');
  release();
  await e.restored();
  await b.resumeRestored();
  assert.deepEqual(seeks.map((s) => [s.partition, s.offset]).sort(), [
    [0, 500],
    [1, 900],
  ]);
  assert.deepEqual(resumed.sort(), [0, 1]);
});
