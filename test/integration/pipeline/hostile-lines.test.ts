import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { buildComponentStage } from '../../../src/app/builtin-stages.ts';
import { startMonitoringAgent, type MonitoringAgent } from '../../../src/app/monitoring-agent.ts';
import { runStages, type RunningStages } from '../../../src/app/run-stages.ts';
import { StageResources } from '../../../src/app/stage-resources.ts';
import { createStageTopics } from '../../../src/app/stage-topics.ts';
import { bootstrapServers } from '../../../src/config/index.ts';
import { ensureMonitoringTopics } from '../../../src/monitoring/topics.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { decodeBatch, pipelineTopic } from '../../../src/stages/index.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { longOr } from '../../helpers/long-run.ts';
import {
  clickhouseNumber,
  pipelineTestConfig,
  pollUntil,
  produceLines,
  readUntil,
  resetBroker,
} from './support.ts';

/** Hostile lines: 3,000 by default, 100,000 in test:long (HAMSTRING_HOSTILE_LINES sets any count). */
const HOSTILE = Number(process.env.HAMSTRING_HOSTILE_LINES ?? longOr(3_000, 100_000));
const VALID = 3_000;
/** Waits grow with the input: the long run pushes a third of a gigabyte of hostile bytes through. */
const DEADLINE_MS = 120_000 + HOSTILE * 10;

let bootstrap: string;
let clickhouseUrl: string;
let clickhousePort: number;
let stages: RunningStages | undefined;
let agent: MonitoringAgent | undefined;
const resources = new StageResources();
before(async () => {
  const [kafka, clickhouse] = await Promise.all([testKafka(), testClickHouse()]);
  bootstrap = kafka.bootstrap;
  clickhouseUrl = clickhouse.url;
  clickhousePort = Number(new URL(clickhouse.url).port);
  await resetBroker(bootstrap);
});
after(async () => {
  await stages?.stop();
  await agent?.stop();
  await resources.close();
});

function valid(i: number): string {
  return JSON.stringify({
    ts: new Date(Date.UTC(2026, 10, 30, 10) + i * 10).toISOString().replace('Z', '000Z'),
    status_code: 'NOERROR',
    src_ip: `10.7.${i % 5}.${(i % 100) + 1}`,
    dns_server_ip: '192.168.2.53',
    domain_name: `v${i}.example.org`,
    record_type: 'A',
    response_ip: '1.2.3.4',
    size: '90b',
  });
}

/** Six kinds of hostile line, each costing the collector no more than any bad line. */
function hostile(i: number): string | Buffer {
  const base = JSON.parse(valid(i)) as Record<string, string>;
  switch (i % 6) {
    case 0:
      return 'x'.repeat(20_000); // over max_line_bytes
    case 1:
      return Buffer.concat([
        Buffer.from('{"ts":"'),
        Buffer.from([0xff, 0xfe, 0xc3, 0x28]),
        Buffer.from('"}'),
      ]);
    case 2:
      return '['.repeat(6_000) + ']'.repeat(6_000); // deeply nested
    case 3:
      return JSON.stringify(Object.fromEntries(Array.from({ length: 1_500 }, (_, k) => [`k${k}`, k])));
    case 4:
      return JSON.stringify({ ...base, domain_name: `${'a'.repeat(240)}.${'a-'.repeat(2_000)}!` }); // made to backtrack
    default:
      return JSON.stringify({ ...base, src_ip: undefined });
  }
}

test(`${HOSTILE} hostile lines mixed into valid traffic: each recorded as failed with a reason, the valid lines all arrive in batches`, async () => {
  const { config } = pipelineTestConfig({ bootstrap, clickhousePort });
  const database = `hostile_${Date.now()}`;
  const made = await Promise.all(
    (['logserver', 'collector'] as const).map((kind) => buildComponentStage(config, kind, { resources })),
  );
  await createStageTopics(config, made, { partitions: 3 });
  await ensureMonitoringTopics(bootstrapServers(config), { partitions: 3 });
  agent = await startMonitoringAgent(config, { database, log: silentLogger() });
  stages = await runStages({
    config,
    stages: made,
    signals: [],
    env: { ...process.env, HAMSTRING_LOG_LEVEL: 'warn' },
  });

  const lines: (string | Buffer)[] = [];
  let v = 0;
  let h = 0;
  // Hostile lines spread through the valid ones, in the proportion of the two counts.
  while (v < VALID || h < HOSTILE)
    if (h < HOSTILE && (v >= VALID || h * VALID <= v * HOSTILE)) lines.push(hostile(h++));
    else lines.push(valid(v++));
  await produceLines(bootstrap, pipelineTopic(config, 'logserver_in', 'dns'), lines);

  const output = pipelineTopic(config, 'batch_sender_to_prefilter', 'dga_prefilter');
  const arrived = new Set<string>();
  const tally = (records: readonly { value: Buffer | null }[]) => {
    arrived.clear();
    for (const r of records) {
      const batch = decodeBatch(r.value);
      const context = new Set(batch.context_logline_ids ?? []);
      for (const l of batch.data) if (!context.has(l.logline_id)) arrived.add(String(l.domain_name));
    }
    return arrived.size;
  };
  tally(await readUntil(bootstrap, output, (rs) => tally(rs) >= VALID, DEADLINE_MS));
  assert.equal(arrived.size, VALID, 'valid lines in batches');

  const failed = await pollUntil(
    () => clickhouseNumber(clickhouseUrl, `SELECT count() FROM ${database}.failed_loglines_dedup`),
    (n) => n >= HOSTILE,
    DEADLINE_MS,
  );
  assert.equal(failed, HOSTILE, 'failed_loglines rows');
  assert.equal(
    await clickhouseNumber(
      clickhouseUrl,
      `SELECT countIf(reason_for_failure = '') FROM ${database}.failed_loglines_dedup`,
    ),
    0,
    'failed lines without a reason',
  );
  assert.equal(
    await clickhouseNumber(
      clickhouseUrl,
      `SELECT uniqExact(reason_for_failure) >= 4 FROM ${database}.failed_loglines_dedup`,
    ),
    1,
    'the kinds of hostile line are told apart by their reasons',
  );
  for (const worker of stages.workers)
    assert.notEqual(worker.status().state, 'failed', `${worker.status().stage} failed`);
});
