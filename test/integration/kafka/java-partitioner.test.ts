import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { findJava } from '../../../src/dev/executables.ts';
import { requireKafkaDistribution } from '../../../src/dev/kafka-distribution.ts';
import { createProducer } from '../../../src/kafka/producer.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueTopic } from '../../helpers/names.ts';
import { createTopics, readCommitted } from '../../support/pipeline-harness.ts';

const PARTITIONS = 12;
// Subnet-like keys (what the logserver and collector key by), plain words and non-ASCII bytes.
const KEYS = [
  ...Array.from({ length: 40 }, (_, i) => `10.${i}.${(i * 7) % 256}.0/24`),
  ...['alpha', 'beta', 'gamma', 'delta', 'a', 'zz', 'ünïcødé', '2001:db8::/64'],
];

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

/** Where the Java client's default partitioner puts each key, from its acknowledgements. */
async function javaPartitions(topic: string): Promise<Map<string, number>> {
  const { libsDir } = requireKafkaDistribution();
  const source = fileURLToPath(new URL('../../support/java/KeyedProducer.java', import.meta.url));
  const { stdout } = await promisify(execFile)(
    findJava(),
    ['-cp', join(libsDir, '*'), source, bootstrap, topic, ...KEYS],
    { timeout: 120_000 },
  );
  return new Map(
    stdout
      .trim()
      .split('\n')
      .map((line) => {
        const [key, partition] = line.split('\t');
        return [key ?? '', Number(partition)];
      }),
  );
}

test('a keyed record lands on the partition the Java client chooses for its key (murmur2)', async () => {
  const topic = uniqueTopic('java-partitioner');
  await createTopics(bootstrap, [topic], PARTITIONS);
  const java = await javaPartitions(topic);
  assert.equal(java.size, KEYS.length);
  // The keys must spread, or agreeing on one partition would prove nothing.
  assert.ok(new Set(java.values()).size >= PARTITIONS / 2, `Java spread: ${[...java.values()].join(',')}`);

  const producer = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'java-partitioner-test',
      transactionTimeoutMs: 30_000,
      messageTimeoutMs: 20_000,
      apiTimeoutMs: 20_000,
    },
    silentLogger(),
  );
  await producer.connect(20_000);
  try {
    for (const key of KEYS) await producer.produce({ topic, key, value: 'node' });
    await producer.flush(20_000);
  } finally {
    await producer.close(10_000);
  }

  const records = await readCommitted(bootstrap, topic, 2 * KEYS.length);
  const nodeRecords = records.filter((r) => r.value?.toString() === 'node');
  assert.equal(nodeRecords.length, KEYS.length);
  const mismatches = nodeRecords
    .map((r) => ({ key: r.key?.toString() ?? '', node: r.partition }))
    .filter(({ key, node }) => java.get(key) !== node)
    .map(({ key, node }) => `${key}: node ${node}, java ${java.get(key)}`);
  assert.deepEqual(mismatches, []);
});
