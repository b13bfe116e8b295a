import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { createPartitionReader } from '../../../src/kafka/attempt-log.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { KafkaAttemptStore, markerKey } from '../../../src/runtime/delivery-attempts/kafka-attempt-store.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';

let bootstrap: string;
const open: KafkaAttemptStore[] = [];

before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

after(async () => {
  await Promise.all(open.map((s) => s.close()));
});

async function store(topic: string, partitions = 1): Promise<KafkaAttemptStore> {
  const s = new KafkaAttemptStore({ bootstrapServers: bootstrap, topic, partitions, log: silentLogger() });
  open.push(s);
  await s.start();
  return s;
}

const tp = (topic: string, partition: number) => ({ topic, partition });

describe('KafkaAttemptStore on a real broker', () => {
  test('creates its topic compacted, and a second instance sees a marker the first put', async () => {
    const topic = uniqueTopic('attempts');
    const group = uniqueGroup('g');
    const a = await store(topic);
    const admin = createAdmin(bootstrap);
    try {
      assert.ok((await admin.listTopics()).includes(topic));
    } finally {
      admin.close();
    }
    await a.put(group, [{ partition: tp('in', 0), marker: { offset: 10, count: 1 } }]);
    const b = await store(topic);
    const got = await b.get(group, [tp('in', 0), tp('in', 1)]);
    assert.deepEqual([...got], [['in:0', { offset: 10, count: 1 }]]);
  });

  test('get() on the writing instance sees its own put at once (read-your-writes)', async () => {
    const topic = uniqueTopic('attempts');
    const group = uniqueGroup('g');
    const a = await store(topic);
    for (let i = 1; i <= 5; i += 1) {
      await a.put(group, [{ partition: tp('in', 0), marker: { offset: 100, count: i, suspectEnd: 104 } }]);
      const got = await a.get(group, [tp('in', 0)]);
      assert.deepEqual(got.get('in:0'), { offset: 100, count: i, suspectEnd: 104 });
    }
  });

  test('markers are keyed group|topic|partition: groups and partitions never mix', async () => {
    const topic = uniqueTopic('attempts');
    const a = await store(topic, 3);
    assert.equal(a.partitions.length, 3);
    await a.put('g1', [
      { partition: tp('t', 0), marker: { offset: 1, count: 1 } },
      { partition: tp('t', 1), marker: { offset: 2, count: 1 } },
    ]);
    await a.put('g2', [{ partition: tp('t', 0), marker: { offset: 3, count: 2 } }]);
    const g1 = await a.get('g1', [tp('t', 0), tp('t', 1), tp('t', 2)]);
    const g2 = await a.get('g2', [tp('t', 0), tp('t', 1)]);
    assert.deepEqual(Object.fromEntries(g1), {
      't:0': { offset: 1, count: 1 },
      't:1': { offset: 2, count: 1 },
    });
    assert.deepEqual(Object.fromEntries(g2), { 't:0': { offset: 3, count: 2 } });
    // The record key is what compaction keeps one value of.
    const reader = createPartitionReader(
      { bootstrapServers: bootstrap, clientId: 'attempt-key-check', isolation: 'read_uncommitted' },
      silentLogger(),
    );
    await reader.connect(10_000);
    try {
      reader.assign([0, 1, 2].map((partition) => ({ topic, partition, offset: -2 })));
      const keys: string[] = [];
      const deadline = Date.now() + 20_000;
      while (keys.length < 3 && Date.now() < deadline)
        keys.push(...(await reader.consume(100, 200)).map((r) => r.key?.toString() ?? ''));
      assert.deepEqual(
        keys.sort(),
        [markerKey('g1', tp('t', 0)), markerKey('g1', tp('t', 1)), markerKey('g2', tp('t', 0))].sort(),
      );
      assert.deepEqual(keys.sort(), ['g1|t|0', 'g1|t|1', 'g2|t|0']);
    } finally {
      await reader.close(5_000);
    }
  });

  test('concurrent puts of different partitions are all acknowledged and all visible', async () => {
    const topic = uniqueTopic('attempts');
    const group = uniqueGroup('g');
    const a = await store(topic, 3);
    const partitions = Array.from({ length: 40 }, (_, i) => tp('in', i));
    await Promise.all(
      partitions.map((p, i) => a.put(group, [{ partition: p, marker: { offset: i * 10, count: 1 } }])),
    );
    const b = await store(topic, 3);
    const got = await b.get(group, partitions);
    assert.equal(got.size, 40);
    for (let i = 0; i < 40; i += 1) assert.deepEqual(got.get(`in:${i}`), { offset: i * 10, count: 1 });
  });

  test('the latest marker wins, and a cleared partition has no marker', async () => {
    const topic = uniqueTopic('attempts');
    const group = uniqueGroup('g');
    const a = await store(topic);
    await a.put(group, [{ partition: tp('in', 0), marker: { offset: 5, count: 1 } }]);
    await a.put(group, [{ partition: tp('in', 0), marker: { offset: 5, count: 2, suspectEnd: 9 } }]);
    await a.put(group, [{ partition: tp('in', 1), marker: { offset: 7, count: 1 } }]);
    await a.clear(group, [tp('in', 1)]);
    const b = await store(topic);
    const got = await b.get(group, [tp('in', 0), tp('in', 1)]);
    assert.deepEqual(Object.fromEntries(got), { 'in:0': { offset: 5, count: 2, suspectEnd: 9 } });
    // The other instance overwrites; the first one sees it on its next get().
    await b.put(group, [{ partition: tp('in', 0), marker: { offset: 12, count: 1 } }]);
    assert.deepEqual((await a.get(group, [tp('in', 0)])).get('in:0'), { offset: 12, count: 1 });
  });

  test('markers put by a process killed right after put() resolved are found after a restart', async () => {
    const topic = uniqueTopic('attempts');
    const group = uniqueGroup('g');
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        fileURLToPath(new URL('./put-then-hang.ts', import.meta.url)),
        bootstrap,
        topic,
        group,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    // The child prints "put" once put() resolved, then waits to be killed.
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('put\n')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`child exited early with ${code}`)));
    });
    child.kill('SIGKILL');
    const b = await store(topic);
    const got = await b.get(group, [tp('in', 0), tp('in', 1), tp('in', 2)]);
    assert.deepEqual(Object.fromEntries(got), {
      'in:0': { offset: 3, count: 1 },
      'in:1': { offset: 4, count: 2, suspectEnd: 6 },
    });
  });
});
