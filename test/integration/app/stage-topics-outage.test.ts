import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createStageTopics } from '../../../src/app/stage-topics.ts';
import { createAdmin } from '../../../src/kafka/admin.ts';
import type { KafkaError } from '../../../src/kafka/kafka-error.ts';
import type { Stage } from '../../../src/runtime/index.ts';
import { uniqueTopic } from '../../helpers/names.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { startPrivateKafka } from '../../helpers/private-kafka.ts';
import { pipelineTestConfig } from '../pipeline/support.ts';

// Its own broker: the test stops it.
let kafka: Awaited<ReturnType<typeof startPrivateKafka>> | undefined;
before(async () => {
  kafka = await startPrivateKafka('stage-topics-outage');
});
after(async () => {
  await kafka?.stop();
});

test('a stage started while the only broker is down waits for it to create its topics, saying so, instead of exiting', async () => {
  if (!kafka) throw new Error('no cluster');
  const { cluster, bootstrap } = kafka;
  const { config } = pipelineTestConfig({ bootstrap, clickhousePort: 1 });
  const input = uniqueTopic('outage-in');
  const output = uniqueTopic('outage-out');
  const stage: Stage = {
    name: 'outage-stage',
    inputTopics: [input],
    outputTopics: [output],
    process: () => ({ outputs: [] }),
  };
  const [node] = cluster.nodeIds();
  if (node === undefined) throw new Error('no node');
  await cluster.stopNode(node);
  const waits: { err: KafkaError; delayMs: number }[] = [];
  const created = createStageTopics(config, [stage], {
    partitions: 2,
    onWait: (err, delayMs) => waits.push({ err, delayMs }),
  });
  // Down past one attempt's timeout: without the retries the creation would have failed by now.
  await waitFor(() => waits.length >= 1, { timeoutMs: 60_000, message: 'it says it waits for Kafka' });
  assert.ok(
    waits.every((w) => w.err.kind === 'transport' || w.err.kind === 'retriable'),
    JSON.stringify(waits.map((w) => w.err.toLog())),
  );
  await cluster.startNode(node);
  const topics = await created;
  assert.ok(topics.includes(input) && topics.includes(output));
  const admin = createAdmin(bootstrap);
  const wanted = [input, output, `${input}.DLT`];
  let counts = new Map<string, number>();
  try {
    // The broker answers the creation before its metadata lists every topic.
    await waitFor(
      async () => {
        counts = await admin.partitionCounts(wanted);
        return wanted.every((t) => counts.has(t));
      },
      { timeoutMs: 15_000, message: 'the topics in the metadata' },
    );
    assert.deepEqual(
      wanted.map((t) => counts.get(t)),
      [2, 2, 2],
    );
  } finally {
    admin.close();
  }
});
