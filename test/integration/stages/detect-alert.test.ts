import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { parse as parseYaml } from 'yaml';
import { validateConfig } from '../../../src/config/index.ts';
import { FaultInjector } from '../../support/fault-injection.ts';
import { minimalCollectorAndPrefilter } from '../../support/minimal-pipeline.ts';
import { createProducer } from '../../../src/kafka/producer.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { ThreadPool, TransactionalWorker } from '../../../src/runtime/index.ts';
import { defaultClients } from '../../../src/runtime/kafka-session.ts';
import {
  AlertFileWriter,
  createAlerter,
  decodeOutgoingAlert,
  type OutgoingAlert,
} from '../../../src/stages/alerter/index.ts';
import { DETECTOR_MONITORING_TABLES } from '../../../src/stages/detector/dga-detector.ts';
import {
  createDgaDetector,
  DGA_SCORE_TASK_MODULE,
  detectorTopics,
} from '../../../src/stages/detector/index.ts';
import type { Batch, LogLine } from '../../../src/stages/messages.ts';
import { generateTraffic } from '../../../src/traffic/index.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueTopic } from '../../helpers/names.ts';
import { createTopics, readCommitted, testKafkaOptions } from '../../support/pipeline-harness.ts';

let bootstrap: string;
const dir = mkdtempSync(join(tmpdir(), 'hamstring-detect-alert-'));
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});
after(() => rmSync(dir, { recursive: true, force: true }));

/**
 * One suspicious batch per host, as the prefilter (NXDOMAIN only) and the inspector (split per host)
 * would hand them on: the generator's lines in the collector's output form.
 */
function suspiciousBatches(): { batches: Batch[]; infected: string[]; benign: string[] } {
  const traffic = generateTraffic({
    seed: 7,
    rate: 200,
    durationSeconds: 60,
    hosts: 30,
    startMs: Date.UTC(2026, 10, 30),
  });
  const byHost = new Map<string, LogLine[]>();
  let n = 0;
  for (const { line, atMs } of traffic.lines()) {
    n += 1;
    const fields = JSON.parse(line) as Record<string, string>;
    if (fields.status_code !== 'NXDOMAIN') continue;
    const ip = fields.src_ip ?? '';
    const lines = byHost.get(ip) ?? [];
    lines.push({
      ...fields,
      logline_id: `line-${n}`,
      subnet_id: `${ip.split('.').slice(0, 3).join('.')}.0_24`,
      ts: new Date(atMs).toISOString().replace('Z', '000Z'),
      src_ip: ip,
    });
    byHost.set(ip, lines);
  }
  // A host failing 25 names under one word domain, each like a benign host label (the shipped
  // model scores them 0.004-0.057: only the spread rule can find it, as it finds domain shadowing),
  // and one failing as many under the shipped search domain (search-list expansions).
  const failedUnder = (ip: string, domain: string): LogLine[] =>
    Array.from({ length: 25 }, (_, i) => ({
      logline_id: `${ip}-${i}`,
      subnet_id: `${ip.split('.').slice(0, 3).join('.')}.0_24`,
      ts: new Date(Date.UTC(2026, 10, 30) + 1000 * i).toISOString().replace('Z', '000Z'),
      src_ip: ip,
      status_code: 'NXDOMAIN',
      record_type: 'A',
      domain_name: `${['img', 'cdn', 'static', 'media', 'assets'][i % 5]}${i}.${domain}`,
    }));
  byHost.set('10.9.9.1', failedUnder('10.9.9.1', 'gardenwords.com'));
  byHost.set('10.9.9.2', failedUnder('10.9.9.2', 'corp.example.com'));
  const batches = [...byHost].map(([ip, data]) => ({
    batch_tree_row_id: `row-${ip}`,
    batch_id: `batch-${ip}`,
    begin_timestamp: data[0]?.ts ?? '',
    end_timestamp: data[data.length - 1]?.ts ?? '',
    data,
  }));
  return {
    batches,
    infected: [...traffic.truth.filter((h) => h.role === 'dga').map((h) => h.ip), '10.9.9.1'],
    benign: [...traffic.truth.filter((h) => h.role === 'benign').map((h) => h.ip), '10.9.9.2'],
  };
}

test('detector and alerter on a real broker: every infected host alerted once on the external topic and in the file (a shadowing host by its failed names under one domain), no benign host, also when the alerter aborts and replays', async () => {
  const shipped = parseYaml(readFileSync('config.yaml', 'utf8')) as {
    pipeline: { data_analysis: { detector_class_name: string }[] };
  };
  const alertsFile = join(dir, 'alerts.jsonl');
  const prefix = uniqueTopic('da');
  const config = validateConfig(
    {
      pipeline: {
        data_inspection: [
          {
            name: 'dga_inspector',
            inspector_module_name: 'm',
            inspector_class_name: 'NoInspector',
            prefilter_name: 'p',
          },
        ],
        ...minimalCollectorAndPrefilter(),
        // The shipped DGA detector; the Domainator's own chain is not part of this test.
        data_analysis: shipped.pipeline.data_analysis.filter((d) => d.detector_class_name === 'DGADetector'),
        alerting: {
          log_to_file: true,
          log_file_path: alertsFile,
          log_to_kafka: true,
          external_kafka_topic: `${prefix}-alerts`,
        },
      },
      environment: {
        kafka_brokers: [{ hostname: '127.0.0.1', internal_port: 9092, external_port: 9092 }],
        monitoring: { clickhouse_server: { hostname: '127.0.0.1' } },
        kafka_topics_prefix: {
          pipeline: { inspector_to_detector: `${prefix}-i2d`, detector_to_alerter: `${prefix}-d2a` },
        },
      },
    },
    { env: {} },
  );
  const detectorConfig = config.pipeline.data_analysis[0];
  assert.ok(detectorConfig);
  const topics = { ...detectorTopics(config, detectorConfig), monitoringPrefix: `${prefix}-ch-` };
  const external = config.pipeline.alerting.external_kafka_topic;
  await createTopics(
    bootstrap,
    [topics.input, ...topics.alerts, external, ...DETECTOR_MONITORING_TABLES.map((t) => `${prefix}-ch-${t}`)],
    3,
  );

  const { batches, infected, benign } = suspiciousBatches();
  const producer = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'batches',
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: 60_000,
      apiTimeoutMs: 30_000,
    },
    silentLogger(),
  );
  await producer.connect(30_000);
  for (const b of batches)
    await producer.produce({ topic: topics.input, key: b.data[0]?.src_ip ?? null, value: JSON.stringify(b) });
  await producer.flush(30_000);
  await producer.close(10_000);

  const pool = new ThreadPool({ module: DGA_SCORE_TASK_MODULE, size: 1 });
  const file = await AlertFileWriter.open(alertsFile);
  // The alerter's first commit fails as abortable: the batch is aborted and consumed again, after
  // its alerts already reached the file.
  const faults = new FaultInjector([
    { operation: 'commit-transaction', nth: 1, error: '_STATE', flags: { isTxnRequiresAbort: true } },
  ]);
  const detector = new TransactionalWorker({
    stage: await createDgaDetector({ detector: detectorConfig, topics, pool }),
    instanceId: '0',
    mode: 'exactly-once',
    kafka: testKafkaOptions(bootstrap, { groupId: `${prefix}-detector` }),
    batch: { size: 10, timeoutMs: 50 },
    log: silentLogger(),
  });
  const alerter = new TransactionalWorker({
    stage: createAlerter({ config, name: 'generic', file }),
    instanceId: '0',
    mode: 'exactly-once',
    kafka: testKafkaOptions(bootstrap, { groupId: `${prefix}-alerter`, apiTimeoutMs: 5_000 }),
    batch: { size: 25, timeoutMs: 50 },
    log: silentLogger(),
    clients: faults.wrap(defaultClients),
  });
  try {
    await detector.start();
    await alerter.start();
    const records = await readCommitted(bootstrap, external, infected.length, 120_000);
    const alerts = records.map((r) => decodeOutgoingAlert(r.value));
    assert.ok(faults.injected.length > 0, 'the alerter aborted once');
    assert.deepEqual(
      alerts.map((a) => a.src_ip).sort(),
      [...infected].sort(),
      'each infected host once, no benign host',
    );
    assert.equal(new Set(alerts.map((a) => a.alert_id)).size, alerts.length);
    for (const a of alerts.filter((x) => x.src_ip !== '10.9.9.1'))
      assert.ok(a.overall_score >= 0.5 && a.result.length >= 3, `${a.src_ip}: ${a.overall_score}`);
    // The shadowing host is alerted by the spread rule, which names the domain instead of a DGA kind.
    const shadowed = alerts.find((a) => a.src_ip === '10.9.9.1');
    assert.equal(shadowed?.kind, 'failed names under gardenwords.com');
    assert.ok((shadowed?.result.length ?? 0) >= 20);
    assert.ok(alerts.every((a) => !benign.includes(a.src_ip)));
    const inFile = readFileSync(alertsFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as OutgoingAlert);
    assert.deepEqual(
      inFile.map((a) => a.alert_id).sort(),
      alerts.map((a) => a.alert_id).sort(),
      'the file holds each alert once',
    );
  } finally {
    await alerter.stop();
    await detector.stop();
    await file.close();
    await pool.close();
  }
});
