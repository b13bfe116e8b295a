import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildComponentStage } from '../../../src/app/builtin-stages.ts';
import { runStages, type RunningStages } from '../../../src/app/run-stages.ts';
import { StageResources } from '../../../src/app/stage-resources.ts';
import { createStageTopics } from '../../../src/app/stage-topics.ts';
import { bootstrapServers } from '../../../src/config/index.ts';
import { ensureMonitoringTopics } from '../../../src/monitoring/topics.ts';
import { decodeBatch, pipelineTopic } from '../../../src/stages/index.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { pipelineTestConfig, produceLines, readUntil, resetBroker } from './support.ts';

/** 2,400 lines of about 950 bytes: one 2,000-line batch of them with its context is over 2 MB. */
const LINES = 2_400;
const MAX_BATCH_BYTES = 900_000;

let bootstrap: string;
let stages: RunningStages | undefined;
const resources = new StageResources();
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
  await resetBroker(bootstrap);
});
after(async () => {
  await stages?.stop();
  await resources.close();
});

function line(i: number): string {
  return JSON.stringify({
    ts: new Date(Date.UTC(2026, 10, 30, 10) + i).toISOString().replace('Z', '000Z'),
    status_code: 'NOERROR',
    src_ip: `10.7.3.${(i % 200) + 1}`,
    dns_server_ip: '192.168.2.53',
    domain_name: `v${i}.example.org`,
    record_type: 'A',
    response_ip: '1.2.3.4',
    size: '90b',
    padding: 'x'.repeat(760),
  });
}

test(`one subnet's ${LINES} lines of ~950 bytes under batch_size 2000: Kafka takes every batch, each within max_batch_bytes, every line once`, async () => {
  const { config } = pipelineTestConfig({
    bootstrap,
    clickhousePort: Number(process.env.HAMSTRING_TEST_CLICKHOUSE_HTTP_PORT ?? 18123),
    edit: (tree) => {
      const handler = (
        (tree.pipeline as Record<string, Record<string, unknown>>).log_collection as Record<string, unknown>
      ).default_batch_handler_config as Record<string, unknown>;
      // Long enough that the full batches leave on their bytes, not on the timeout.
      handler.batch_timeout = 5;
      handler.max_batch_bytes = MAX_BATCH_BYTES;
    },
  });
  const made = [await buildComponentStage(config, 'collector', { resources })];
  await createStageTopics(config, made, { partitions: 1 });
  await ensureMonitoringTopics(bootstrapServers(config), { partitions: 1 });
  stages = await runStages({
    config,
    stages: made,
    signals: [],
    env: { ...process.env, HAMSTRING_LOG_LEVEL: 'warn' },
  });
  const values = Array.from({ length: LINES }, (_, i) => line(i));
  assert.ok(Buffer.byteLength(values[0]!) > 900);
  await produceLines(
    bootstrap,
    pipelineTopic(config, 'logserver_to_collector', 'dga_collector'),
    values,
    () => '10.7.3.0_24',
  );

  const output = pipelineTopic(config, 'batch_sender_to_prefilter', 'dga_prefilter');
  const fresh = (records: readonly { value: Buffer | null }[]) =>
    records.flatMap((r) => {
      const batch = decodeBatch(r.value);
      const context = new Set(batch.context_logline_ids ?? []);
      return batch.data.filter((l) => !context.has(l.logline_id)).map((l) => String(l.domain_name));
    });
  const records = await readUntil(bootstrap, output, (rs) => fresh(rs).length >= LINES, 120_000);
  const arrived = fresh(records);
  assert.equal(arrived.length, LINES, 'every line in a batch, none twice');
  assert.deepEqual(new Set(arrived), new Set(values.map((_, i) => `v${i}.example.org`)));
  const sizes = records.map((r) => r.value?.length ?? 0);
  assert.ok(Math.max(...sizes) <= MAX_BATCH_BYTES, `largest batch ${Math.max(...sizes)} bytes`);
  assert.ok(records.length >= 5, `${records.length} batches: the bytes, not batch_size, cut them`);
  assert.ok(
    records.some((r) => (decodeBatch(r.value).context_logline_ids?.length ?? 0) > 0),
    'batches carry their context',
  );
});
