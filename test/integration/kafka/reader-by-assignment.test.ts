import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { createReadCommittedReader, type RecordReader } from '../../../src/kafka/read-committed-reader.ts';
import type { FetchedRecord } from '../../../src/kafka/records.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { createTopics, seed } from '../../support/pipeline-harness.ts';

// The verifier reads by assignment, so that no group coordinator it depends on can move or stop
// under it; this is what such a reader must still do.

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

async function readUntil(
  reader: RecordReader,
  out: Map<string, FetchedRecord>,
  count: number,
): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (out.size < count) {
    if (Date.now() > deadline) throw new Error(`${count} records not read within 60 s; read ${out.size}`);
    for (const r of await reader.consume(500, 500)) out.set(`${r.partition}@${r.offset}`, r);
  }
}

test('a reader by assignment reads every partition from the start without joining a group, and finds a partition added while it reads', async () => {
  const topic = uniqueTopic('by-assignment');
  const group = uniqueGroup('by-assignment');
  await createTopics(bootstrap, [topic], 3);
  await seed(bootstrap, topic, 0, 300);
  const reader = createReadCommittedReader({
    bootstrap,
    clientId: 'by-assignment',
    groupId: group,
    byAssignment: true,
  });
  const admin = createAdmin(bootstrap);
  const read = new Map<string, FetchedRecord>();
  try {
    await reader.connect(20_000);
    reader.subscribe([topic]);
    await readUntil(reader, read, 300);
    assert.deepEqual(
      [...new Set([...read.values()].map((r) => r.partition))].sort(),
      [0, 1, 2],
      'every partition read',
    );
    const described = await admin.describeGroup(group);
    assert.deepEqual(described.members, [], `no member joined group ${group} (${described.state})`);

    await admin.createPartitions(topic, 4);
    await seed(bootstrap, topic, 300, 300);
    await readUntil(reader, read, 600);
    const seqs = [...read.values()].map((r) => Number(String(r.value))).sort((a, b) => a - b);
    assert.deepEqual(
      seqs,
      Array.from({ length: 600 }, (_, i) => i),
      'each record once',
    );
    assert.ok(
      [...read.values()].some((r) => r.partition === 3),
      'records of the partition added while it read',
    );
    // The end as the fetch state tells it, which follows the last records within a fetch or two.
    const deadline = Date.now() + 10_000;
    while (!reader.atEnd() && Date.now() < deadline) assert.equal((await reader.consume(100, 200)).length, 0);
    assert.ok(reader.atEnd(), 'at the end of every partition');
  } finally {
    admin.close();
    await reader.close(10_000);
  }
});
