import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createProducer } from '../../../src/kafka/producer.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import {
  DLT_HEADERS,
  DLT_TRUNCATION_HEADERS,
  recordBytes,
} from '../../../src/runtime/record-errors/dead-letter.ts';
import type { StageOutput } from '../../../src/runtime/stage.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { readCommitted } from '../../support/pipeline-harness.ts';
import { counts, monitoringWorld, rows, startAgent, testConfig } from './support.ts';

let bootstrap: string;
let chUrl: string;
before(async () => {
  const [k, ch] = await Promise.all([testKafka(), testClickHouse()]);
  bootstrap = k.bootstrap;
  chUrl = ch.url;
});

/** Produces with a producer whose own limit is the broker's, so a record just under 1 MiB gets in. */
async function produceLarge(records: StageOutput[]): Promise<void> {
  const p = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'mon-large-seed',
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: 30_000,
      apiTimeoutMs: 30_000,
      overrides: { 'message.max.bytes': 1_048_576 },
    },
    silentLogger(),
  );
  await p.connect(30_000);
  for (const r of records) await p.produce(r);
  await p.flush(30_000);
  const t = p.tally();
  await p.close(10_000);
  assert.equal(t.failed, 0, `seeding failed: ${t.firstError?.message}`);
}

describe('monitoring agent and a malformed row whose dead letter would exceed the size limit', () => {
  test('dead-letters it once, truncated and saying so, and every other row reaches ClickHouse once', async () => {
    const world = await monitoringWorld(bootstrap, ['logline_to_batches'], 1);
    const topic = `${world.prefix}logline_to_batches`;
    const good = rows(world, 'logline_to_batches', 0, 60);
    const huge = `{"not json${'x'.repeat(1_040_000)}`;
    await produceLarge([...good.slice(0, 30), { topic, value: huge }, ...good.slice(30)]);
    const agent = await startAgent(testConfig(bootstrap, chUrl), bootstrap, world);
    try {
      await waitFor(async () => (await counts(chUrl, world.database, 'logline_to_batches')).dedup === 60, {
        timeoutMs: 60_000,
        message: 'the 60 good rows in ClickHouse',
        observe: () => agent.worker.status(),
      });
      const dead = await readCommitted(bootstrap, world.dlt, 1, 20_000);
      assert.equal(dead.length, 1, 'dead-lettered exactly once');
      const h = dead[0]!.headers;
      assert.equal(h[DLT_HEADERS.errorKind]?.toString(), 'bad-json');
      assert.equal(h[DLT_TRUNCATION_HEADERS.truncated]?.toString(), 'value');
      assert.equal(h[DLT_TRUNCATION_HEADERS.valueBytes]?.toString(), String(Buffer.byteLength(huge)));
      assert.ok(recordBytes({ key: dead[0]!.key, value: dead[0]!.value, headers: h }) <= 1_000_000);
      // Inserted once: the batch was never rewound and replayed into ClickHouse.
      assert.equal((await counts(chUrl, world.database, 'logline_to_batches')).raw, 60);
      assert.equal(agent.worker.status().state, 'running');
    } finally {
      await agent.stop();
    }
  });
});
