import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { drainMonitoringAgent } from '../../../src/monitoring/agent-drain.ts';
import { createConsumer } from '../../../src/kafka/consumer.ts';
import { createProducer } from '../../../src/kafka/producer.ts';
import { TABLES } from '../../../src/monitoring/tables.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { testConsumerSettings } from '../../helpers/consumer-settings.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueGroup, uniqueTopic, uniqueTransactionalId } from '../../helpers/names.ts';
import { createTopics } from '../../support/pipeline-harness.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

/** Monitoring topics of a prefix of their own (one partition each), rows in `alerts` only. */
async function world(name: string) {
  const prefix = `${uniqueTopic(name)}_`;
  await createTopics(
    bootstrap,
    TABLES.map((t) => `${prefix}${t.name}`),
    1,
  );
  return { prefix, alerts: `${prefix}alerts`, group: uniqueGroup(name) };
}

/** One transaction of `rows` records, committed or aborted. */
async function transaction(topic: string, rows: number, outcome: 'commit' | 'abort'): Promise<void> {
  const p = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'drain-rows',
      transactionalId: uniqueTransactionalId('drain'),
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: 30_000,
      apiTimeoutMs: 30_000,
    },
    silentLogger(),
  );
  await p.connect(30_000);
  try {
    await p.initTransactions();
    await p.beginTransaction();
    for (let i = 0; i < rows; i += 1) await p.produce({ topic, key: null, value: `{"row":${i}}` });
    if (outcome === 'commit') await p.commitTransaction();
    else await p.abortTransaction();
  } finally {
    await p.close(10_000);
  }
}

/** What the agent's group would commit after copying the rows below `offset`. */
async function commitGroup(group: string, topic: string, offset: number): Promise<void> {
  const c = createConsumer(
    testConsumerSettings(bootstrap, 'drain-group', group),
    { onAssign: () => undefined, onRevoke: () => undefined, onLost: () => undefined },
    () => undefined,
    silentLogger(),
  );
  await c.connect(30_000);
  try {
    await c.commitOffsets([{ topic, partition: 0, offset }]);
  } finally {
    await c.close(10_000);
  }
}

describe('draining the monitoring agent (real broker)', () => {
  test('rows committed by the stages and not yet by the agent keep the drain waiting, however still they stand', async () => {
    const w = await world('drain-rows');
    await transaction(w.alerts, 20, 'commit');
    // An agent busy with a large insert commits nothing for a while: the offsets stand still.
    const r = await drainMonitoringAgent({
      bootstrap,
      groupId: w.group,
      topicPrefix: w.prefix,
      timeoutMs: 8_000,
      quietMs: 1_000,
      pollMs: 200,
    });
    assert.equal(r.drained, false, JSON.stringify(r));
    // Nothing committed: librdkafka's invalid offset.
    assert.deepEqual(
      r.behind.map((p) => [p.topic, p.committed < 0]),
      [[w.alerts, true]],
    );
  });

  test('a partition whose tail is an aborted transaction counts as drained once it stood still', async () => {
    const w = await world('drain-aborted');
    await transaction(w.alerts, 5, 'commit'); // offsets 0-4, marker 5
    await commitGroup(w.group, w.alerts, 5);
    await transaction(w.alerts, 3, 'abort'); // offsets 6-8, marker 9: high 10
    const r = await drainMonitoringAgent({
      bootstrap,
      groupId: w.group,
      topicPrefix: w.prefix,
      timeoutMs: 30_000,
      quietMs: 1_000,
      pollMs: 200,
    });
    assert.equal(r.drained, true, JSON.stringify(r));
    assert.deepEqual(
      r.behind.map((p) => [p.topic, p.committed, p.high]),
      [[w.alerts, 5, 10]],
    );
  });
});
