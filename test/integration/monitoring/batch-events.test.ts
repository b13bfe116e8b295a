import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { FaultInjector } from '../../support/fault-injection.ts';
import type { MonitoringAgent } from '../../../src/app/monitoring-agent.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { BatchEventEmitter } from '../../../src/monitoring/batch-event-emitter.ts';
import {
  batchPartitions,
  withBatchEvents,
  type BatchPartition,
} from '../../../src/monitoring/batch-events.ts';
import { defaultClients } from '../../../src/runtime/kafka-session.ts';
import { TransactionalWorker } from '../../../src/runtime/index.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueTopic } from '../../helpers/names.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import {
  committedMatchesEnd,
  createTopics,
  passThroughStage,
  seed,
  testKafkaOptions,
} from '../../support/pipeline-harness.ts';
import { monitoringWorld, query, startAgent, testConfig } from './support.ts';

let bootstrap: string;
let chUrl: string;
before(async () => {
  const [k, ch] = await Promise.all([testKafka(), testClickHouse()]);
  bootstrap = k.bootstrap;
  chUrl = ch.url;
});

interface BatchRow {
  event: string;
  src_topic: string;
  src_partition: number;
  src_offset: string;
  row_index: number;
  first_offset: string;
  last_offset: string;
  records: number;
  n: string;
}

describe('worker_batches: the runtime records its batches', () => {
  const agents: MonitoringAgent[] = [];
  after(async () => {
    await Promise.all(agents.map((a) => a.stop()));
  });

  test('one committed row per committed batch partition, none for the aborted transaction, the abort reported aside', async () => {
    const world = await monitoringWorld(bootstrap, ['worker_batches']);
    const input = uniqueTopic('wb-in');
    const output = uniqueTopic('wb-out');
    const group = `${world.group}-stage`;
    const total = 600;
    await createTopics(bootstrap, [input, output], 3);
    await seed(bootstrap, input, 0, total);

    // What the stage processed last, and what the worker said it committed.
    let processed: BatchPartition[] = [];
    const committed: BatchPartition[] = [];
    const inner = passThroughStage(input, output, group);
    const observed = {
      ...inner,
      process: (records: Parameters<typeof inner.process>[0], ctx: Parameters<typeof inner.process>[1]) => {
        processed = batchPartitions(records);
        return inner.process(records, ctx);
      },
    };
    const emitter = new BatchEventEmitter({
      stage: group,
      instanceId: 'w0',
      topicPrefix: world.prefix,
      bootstrapServers: bootstrap,
      log: silentLogger(),
    });
    await emitter.start();
    const faults = new FaultInjector([
      { operation: 'send-offsets', nth: 2, error: 'ILLEGAL_GENERATION', flags: { isTxnRequiresAbort: true } },
    ]);
    let abortedBatch: BatchPartition[] | undefined;
    const worker = new TransactionalWorker({
      stage: withBatchEvents(observed, { instanceId: 'w0', topicPrefix: world.prefix, emitter }),
      instanceId: 'w0',
      mode: 'exactly-once',
      kafka: testKafkaOptions(bootstrap, { groupId: group, apiTimeoutMs: 3_000 }),
      batch: { size: 50, timeoutMs: 50 },
      log: silentLogger(),
      clients: faults.wrap(defaultClients),
      hooks: {
        beforeSendOffsets: () => {
          if (faults.calls('send-offsets') === 1) abortedBatch = processed; // the 2nd send-offsets fails
        },
        afterCommit: (info) => {
          committed.push(...processed);
          emitter.committed(info);
        },
      },
    });
    await worker.start();
    const agent = await startAgent(testConfig(bootstrap, chUrl), bootstrap, world);
    agents.push(agent);
    const admin = createAdmin(bootstrap);
    try {
      await waitFor(async () => (await committedMatchesEnd(admin, group, input)).ok, {
        timeoutMs: 60_000,
        message: 'the stage committed its whole input',
        observe: () => worker.status(),
      });
    } finally {
      admin.close();
      await worker.stop();
      await emitter.stop();
    }
    assert.equal(faults.injected.length, 1, 'one transaction was aborted');
    assert.ok(abortedBatch && abortedBatch.length > 0);
    const recordsCommitted = committed.reduce((s, p) => s + p.records, 0);
    assert.equal(recordsCommitted, total, 'the worker committed every record once');

    const db = `\`${world.database}\``;
    await waitFor(
      async () => {
        const [r] = await query<{ n: string }>(
          chUrl,
          `SELECT count() AS n FROM ${db}.worker_batches_dedup WHERE event = 'committed'`,
        );
        return Number(r?.n) === committed.length;
      },
      { timeoutMs: 60_000, message: `${committed.length} committed rows in ClickHouse` },
    );
    const rows = await query<BatchRow>(
      chUrl,
      `SELECT event, src_topic, src_partition, src_offset, row_index, first_offset, last_offset, records, count() AS n
       FROM ${db}.worker_batches
       GROUP BY event, src_topic, src_partition, src_offset, row_index, first_offset, last_offset, records
       ORDER BY src_partition, toInt64(src_offset)`,
    );
    const committedRows = rows.filter((r) => r.event === 'committed');
    // Every stored copy is a committed batch (read_committed: the aborted transaction's row never arrives).
    assert.equal(
      committedRows.reduce((s, r) => s + Number(r.n), 0),
      committed.length,
      'raw committed rows = committed batch partitions',
    );
    const key = (t: string, p: number, first: number, last: number, n: number) =>
      `${t}/${p}/${first}-${last}/${n}`;
    assert.deepEqual(
      committedRows
        .map((r) =>
          key(r.src_topic, r.src_partition, Number(r.first_offset), Number(r.last_offset), r.records),
        )
        .sort(),
      committed.map((p) => key(p.topic, p.partition, p.firstOffset, p.lastOffset, p.records)).sort(),
    );
    for (const r of committedRows) {
      assert.equal(r.src_offset, r.first_offset);
      assert.equal(r.row_index, 0);
    }
    assert.equal(
      committedRows.reduce((s, r) => s + r.records, 0),
      total,
      'committed rows cover every input record exactly once',
    );

    // The aborted batch is reported out of band, under the emitter's own identity.
    const aborted = rows.filter((r) => r.event === 'aborted');
    assert.ok(aborted.length >= abortedBatch.length, JSON.stringify(aborted));
    for (const p of abortedBatch)
      assert.ok(
        aborted.some((r) => r.first_offset === String(p.firstOffset) && Number(r.n) === 1),
        `aborted row for ${p.topic}/${p.partition}@${p.firstOffset}`,
      );
    for (const r of aborted) {
      assert.equal(r.src_topic, `__worker.${group}.w0`);
      assert.equal(r.src_partition, emitter.incarnation);
    }
    await agent.stop();
  });
});
