import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildComponentStage } from '../../../src/app/builtin-stages.ts';
import { runStages, type RunningStages } from '../../../src/app/run-stages.ts';
import { StageResources } from '../../../src/app/stage-resources.ts';
import { createStageTopics } from '../../../src/app/stage-topics.ts';
import { bootstrapServers } from '../../../src/config/index.ts';
import { ensureMonitoringTopics } from '../../../src/monitoring/topics.ts';
import { decodeBatch, pipelineTopic } from '../../../src/stages/index.ts';
import { generateTraffic } from '../../../src/traffic/generator.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { pipelineTestConfig, produceLines, readUntil, resetBroker } from './support.ts';

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

/** The line as it leaves the collector: `ts` rewritten to ISO-8601 UTC with microseconds. */
function expectedKey(line: string): string {
  const j = JSON.parse(line) as Record<string, string>;
  const ts = (j.ts ?? '').endsWith('Z') ? (j.ts ?? '') : `${j.ts ?? ''}.000000Z`;
  return `${j.src_ip ?? ''} ${j.domain_name ?? ''} ${ts} ${j.size ?? ''}`;
}

test("HAMSTRING v2.0.0-format lines from the generator pass the shipped config's collector, every one, beside heiDGAF-format lines", async () => {
  const { config } = pipelineTestConfig({
    bootstrap,
    clickhousePort: Number(process.env.HAMSTRING_TEST_CLICKHOUSE_HTTP_PORT ?? 18123),
  });
  const made = await Promise.all(
    (['logserver', 'collector'] as const).map((kind) => buildComponentStage(config, kind, { resources })),
  );
  await createStageTopics(config, made, { partitions: 2 });
  await ensureMonitoringTopics(bootstrapServers(config), { partitions: 2 });
  stages = await runStages({
    config,
    stages: made,
    signals: [],
    env: { ...process.env, HAMSTRING_LOG_LEVEL: 'warn' },
  });

  const traffic = (format: 'v2' | 'heidgaf', seed: number) =>
    [
      ...generateTraffic({
        seed,
        rate: 200,
        durationSeconds: 20,
        hosts: 60,
        startMs: Date.UTC(2026, 10, 30, 12),
        format,
      }).lines(),
    ].map((l) => l.line);
  const v2 = traffic('v2', 11);
  const heidgaf = traffic('heidgaf', 12);
  assert.ok(
    v2.every((l) => !('response_ip' in (JSON.parse(l) as object))),
    'v2 lines carry no response_ip',
  );
  const values = [...v2, ...heidgaf];
  await produceLines(bootstrap, pipelineTopic(config, 'logserver_in', 'dns'), values);

  const output = pipelineTopic(config, 'batch_sender_to_prefilter', 'dga_prefilter');
  const fresh = (records: readonly { value: Buffer | null }[]) =>
    records.flatMap((r) => {
      const batch = decodeBatch(r.value);
      const context = new Set(batch.context_logline_ids ?? []);
      return batch.data
        .filter((l) => !context.has(l.logline_id))
        .map((l) => `${l.src_ip} ${String(l.domain_name)} ${l.ts} ${String(l.size)}`);
    });
  const records = await readUntil(bootstrap, output, (rs) => fresh(rs).length >= values.length, 180_000);
  const arrived = fresh(records).sort();
  assert.equal(arrived.length, values.length, `${v2.length} v2 and ${heidgaf.length} heiDGAF lines`);
  assert.deepEqual(arrived, values.map(expectedKey).sort(), 'every line accepted once, ts read right');
  for (const worker of stages.workers)
    assert.notEqual(worker.status().state, 'failed', `${worker.status().stage} failed`);
});
