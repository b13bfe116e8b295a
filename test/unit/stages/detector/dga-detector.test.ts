import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { DetectorConfig } from '../../../../src/config/index.ts';
import { ThreadPool } from '../../../../src/runtime/index.ts';
import { alertId, median } from '../../../../src/stages/detector/alerts.ts';
import { WARNING_WINDOWS_STORE } from '../../../../src/stages/detector/window-alerts.ts';
import { createDgaDetector } from '../../../../src/stages/detector/dga-detector.ts';
import type { Alert } from '../../../../src/stages/messages.ts';
import {
  ModelChecksumError,
  serializeModel,
  sha256Hex,
} from '../../../../src/stages/detector/model/model-file.ts';
import { DGA_SCORE_TASK_MODULE } from '../../../../src/stages/detector/score-task.ts';
import { dgaModelFile } from '../../../support/dga-model.ts';
import { MemoryState } from '../../../support/memory-state.ts';
import { jsonRecord, stageContext, timerContext } from '../../../support/stage-context.ts';
import { monitoringRows } from '../outputs.ts';

// One split on name_length (feature 1): <= 20 characters scores sigmoid(-2), longer sigmoid(2).
const LOW = 1 / (1 + Math.exp(2));
const HIGH = 1 / (1 + Math.exp(-2));
const model = dgaModelFile([
  [
    [1, 20, 1, 2],
    [-1, -2],
    [-1, 2],
  ],
]);
const dir = mkdtempSync(join(tmpdir(), 'hamstring-detector-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const modelPath = join(dir, 'model.json');
const modelText = serializeModel(model);
writeFileSync(modelPath, modelText);
const checksum = sha256Hex(modelText);

function detectorConfig(over: Partial<DetectorConfig> = {}): DetectorConfig {
  return {
    name: 'dga_detector',
    detector_module_name: 'dga_detector',
    detector_class_name: 'DGADetector',
    model: 'test',
    checksum,
    model_path: modelPath,
    threshold: 0.5,
    min_warnings: 1,
    inspector_name: 'dga_inspector',
    produce_topics: ['generic'],
    domainator: { min_window: 3, max_window: 10, idle_timeout_seconds: 300, search_domains: [] },
    ...over,
  };
}
const topics = { input: 'in', alerts: ['pipeline-detector_to_alerter-generic'] };
const line = (id: string, ip: string, domain: string) => ({
  logline_id: id,
  subnet_id: '10.0.0.0_24',
  ts: '2026-11-30T00:00:00.000000Z',
  src_ip: ip,
  domain_name: domain,
});
const batch = {
  batch_tree_row_id: 'parent-row',
  batch_id: 'batch-1',
  begin_timestamp: '2026-11-30T00:00:00.000000Z',
  end_timestamp: '2026-11-30T00:00:00.000000Z',
  data: [
    line('l1', '10.0.0.1', 'a.com'),
    line('l2', '10.0.0.1', 'qwertzuiopasdfghjkl.com'),
    line('l3', '10.0.0.1', 'mnbvcxylkjhgfdsapoiuz.net'),
    line('l4', '10.0.0.2', 'b.org'),
  ],
};
const alertsOf = (outputs: { topic: string; value: unknown }[]) =>
  outputs.filter((o) => o.topic === topics.alerts[0]).map((o) => JSON.parse(String(o.value)) as Alert);

test('the median of warnings: middle value, or the mean of the two middle values', () => {
  assert.equal(median([0.9, 0.6, 0.7]), 0.7);
  assert.equal(median([0.6, 0.9]), 0.75);
  assert.throws(() => median([]));
});

test('a model file whose SHA-256 differs from the checksum stops the stage, naming both values', async () => {
  const wrong = 'ab'.repeat(32);
  await assert.rejects(
    createDgaDetector({ detector: detectorConfig({ checksum: wrong }), topics }),
    (e: unknown) => {
      assert.ok(e instanceof ModelChecksumError);
      assert.match(e.message, new RegExp(wrong));
      assert.match(e.message, new RegExp(checksum));
      return true;
    },
  );
});

test('one alert per host with a warning per line at or above the threshold and the median score', async () => {
  const stage = await createDgaDetector({
    detector: detectorConfig(),
    topics,
    clock: () => Date.UTC(2026, 10, 30),
  });
  const result = await stage.process([jsonRecord('in', 7, batch, '10.0.0.1')], stageContext());
  const alerts = alertsOf(result.outputs);
  assert.equal(alerts.length, 1, 'host 10.0.0.2 has no malicious line and gets no alert');
  const [alert] = alerts;
  assert.equal(alert?.src_ip, '10.0.0.1');
  assert.deepEqual(
    alert?.result.map((w) => w.request.logline_id),
    ['l2', 'l3'],
  );
  assert.ok(Math.abs((alert?.overall_score ?? 0) - HIGH) < 1e-12);
  assert.equal(alert?.suspicious_batch_id, 'batch-1');
  assert.equal(alert?.detector_name, 'dga_detector');
  assert.equal(alert?.alert_timestamp, '2026-11-30T00:00:00.000Z');
  const alertOutput = result.outputs.find((o) => o.topic === topics.alerts[0]);
  assert.equal(alertOutput?.key, '10.0.0.1');
  assert.equal(alertOutput?.source?.offset, 7);
});

test('the threshold is respected: no line reaches 0.9, so no alert', async () => {
  const stage = await createDgaDetector({ detector: detectorConfig({ threshold: 0.9 }), topics });
  assert.ok(HIGH < 0.9 && LOW < 0.9);
  const result = await stage.process([jsonRecord('in', 0, batch)], stageContext());
  assert.deepEqual(alertsOf(result.outputs), []);
  const rows = result.outputs.filter((o) => o.topic === 'clickhouse_alerts');
  assert.equal(rows.length, 0);
});

test('context lines carried over from the previous batch are neither scored nor recorded again', async () => {
  const stage = await createDgaDetector({ detector: detectorConfig(), topics });
  const withContext = { ...batch, context_logline_ids: ['l2', 'l3'] };
  const result = await stage.process([jsonRecord('in', 0, withContext)], stageContext());
  assert.deepEqual(alertsOf(result.outputs), []);
  const logged = monitoringRows(result.outputs, 'logline_timestamps').map((r) => r.logline_id);
  assert.deepEqual(logged, ['l1', 'l4']);
});

test('min_warnings: a host with fewer warnings in the batch is not alerted', async () => {
  const two = await createDgaDetector({ detector: detectorConfig({ min_warnings: 2 }), topics });
  const three = await createDgaDetector({ detector: detectorConfig({ min_warnings: 3 }), topics });
  assert.equal(alertsOf((await two.process([jsonRecord('in', 0, batch)], stageContext())).outputs).length, 1);
  assert.equal(
    alertsOf((await three.process([jsonRecord('in', 0, batch)], stageContext())).outputs).length,
    0,
  );
});

test('weak_warnings reaches the decision: names below threshold alert a host by their number', async () => {
  // Host 10.0.0.1 has two long names (HIGH) and one short (LOW); host 10.0.0.2 one short name.
  const strict = { threshold: 0.95, min_warnings: 2 };
  const none = await createDgaDetector({ detector: detectorConfig(strict), topics });
  const weak = await createDgaDetector({
    detector: detectorConfig({ ...strict, weak_warnings: { threshold: LOW / 2, min_warnings: 3 } }),
    topics,
  });
  assert.equal(
    alertsOf((await none.process([jsonRecord('in', 0, batch)], stageContext())).outputs).length,
    0,
  );
  const alerts = alertsOf((await weak.process([jsonRecord('in', 0, batch)], stageContext())).outputs);
  assert.deepEqual(
    alerts.map((a) => [a.src_ip, a.result.map((r) => r.request.domain_name)]),
    [['10.0.0.1', ['a.com', 'qwertzuiopasdfghjkl.com', 'mnbvcxylkjhgfdsapoiuz.net']]],
  );
});

test('spread_warnings reaches the decision: failed names under one domain alert a host, named in its kind', async () => {
  const failed = (id: string, ip: string, domain: string, status = 'NXDOMAIN') => ({
    ...line(id, ip, domain),
    status_code: status,
  });
  const spreadBatch = {
    ...batch,
    data: [
      // 10.0.0.1: three failed names under shadowed.com; 10.0.0.2: three that resolved; 10.0.0.3:
      // three failed reverse lookups, which never count.
      ...['k1', 'k2', 'k3'].map((l, i) => failed(`a${i}`, '10.0.0.1', `${l}.shadowed.com`)),
      ...['k1', 'k2', 'k3'].map((l, i) => failed(`b${i}`, '10.0.0.2', `${l}.cdn.example.net`, 'NOERROR')),
      ...['1', '2', '3'].map((l, i) => failed(`c${i}`, '10.0.0.3', `${l}.2.0.192.in-addr.arpa`)),
    ],
  };
  const spreadConfig = { threshold: 0, min_warnings: 3, exempt_domains: [] };
  const stage = await createDgaDetector({
    detector: detectorConfig({ threshold: 0.95, min_warnings: 5, spread_warnings: spreadConfig }),
    topics,
  });
  const alerts = alertsOf((await stage.process([jsonRecord('in', 0, spreadBatch)], stageContext())).outputs);
  assert.deepEqual(
    alerts.map((a) => [a.src_ip, a.kind, a.result.length]),
    [['10.0.0.1', 'failed names under shadowed.com', 3]],
  );
  const exempt = await createDgaDetector({
    detector: detectorConfig({
      threshold: 0.95,
      min_warnings: 5,
      spread_warnings: { ...spreadConfig, exempt_domains: ['shadowed.com'] },
    }),
    topics,
  });
  assert.deepEqual(
    alertsOf((await exempt.process([jsonRecord('in', 0, spreadBatch)], stageContext())).outputs),
    [],
  );
});

test('monitoring rows: one alert row, the batch finished as detected, each line detected or finished', async () => {
  const stage = await createDgaDetector({ detector: detectorConfig(), topics });
  const result = await stage.process([jsonRecord('in', 3, batch)], stageContext());
  const rows = (topic: string) => monitoringRows(result.outputs, topic.replace('clickhouse_', ''));
  assert.equal(rows('clickhouse_alerts').length, 1);
  assert.equal(
    rows('clickhouse_alerts')[0]?.domain_names,
    JSON.stringify(['qwertzuiopasdfghjkl.com', 'mnbvcxylkjhgfdsapoiuz.net']),
  );
  assert.deepEqual(
    rows('clickhouse_suspicious_batch_timestamps').map((r) => r.status),
    ['detected'],
  );
  assert.deepEqual(
    rows('clickhouse_logline_timestamps').map((r) => [r.logline_id, r.status]),
    [
      ['l1', 'finished'],
      ['l2', 'detected'],
      ['l3', 'detected'],
      ['l4', 'finished'],
    ],
  );
  assert.equal(rows('clickhouse_batch_tree')[0]?.parent_batch_row_id, 'parent-row');
  assert.ok(
    result.outputs.filter((o) => !o.topic.startsWith('clickhouse_')).every((o) => o.source?.offset === 3),
    'every alert names its source record',
  );
  const monitoring = ['alerts', 'suspicious_batch_timestamps', 'logline_timestamps', 'batch_tree'];
  assert.ok(
    monitoring.every((t) => monitoringRows(result.outputs, t).every((r) => r.src_offset === 3)),
    'every monitoring row is about the source record',
  );
});

test('a record that is not a batch fails alone as a decode error; the others are scored', async () => {
  const stage = await createDgaDetector({ detector: detectorConfig(), topics });
  const result = await stage.process(
    [jsonRecord('in', 0, 'not json'), jsonRecord('in', 1, batch)],
    stageContext(),
  );
  assert.equal(result.failures?.length, 1);
  assert.equal(result.failures?.[0]?.record.offset, 0);
  assert.equal((result.failures?.[0]?.error as Error).name, 'DecodeError');
  assert.equal(alertsOf(result.outputs).length, 1);
});

test('scoring in the ThreadPool gives the same alerts as scoring inline', async () => {
  const pool = new ThreadPool({ module: DGA_SCORE_TASK_MODULE, size: 1 });
  try {
    const inline = await createDgaDetector({ detector: detectorConfig(), topics, clock: () => 0 });
    const threaded = await createDgaDetector({ detector: detectorConfig(), topics, clock: () => 0, pool });
    const a = await inline.process([jsonRecord('in', 0, batch)], stageContext());
    const b = await threaded.process([jsonRecord('in', 0, batch)], stageContext());
    assert.deepEqual(alertsOf(b.outputs), alertsOf(a.outputs));
    assert.equal(pool.threads, 1, 'the pool ran the scoring');
  } finally {
    await pool.close();
  }
});

const timed = (id: string, ip: string, domain: string, ts: string) => ({ ...line(id, ip, domain), ts });
const batchOf = (id: string, lines: ReturnType<typeof timed>[]) => ({
  batch_tree_row_id: `row-${id}`,
  batch_id: id,
  begin_timestamp: lines[0]!.ts,
  end_timestamp: lines[lines.length - 1]!.ts,
  data: lines,
});

test('warnings of one host in earlier batches count: the window alerts once, in the batch that completes it', async () => {
  const stage = await createDgaDetector({ detector: detectorConfig({ min_warnings: 3 }), topics });
  const state = new MemoryState();
  const first = batchOf('s1', [
    timed('w1', '10.0.0.1', 'qwertzuiopasdfghjkl1.com', '2026-11-30T00:01:00.000000Z'),
    timed('w2', '10.0.0.1', 'qwertzuiopasdfghjkl2.com', '2026-11-30T00:02:00.000000Z'),
  ]);
  const second = batchOf('s2', [
    timed('b1', '10.0.0.1', 'a.com', '2026-11-30T00:03:00.000000Z'),
    timed('w3', '10.0.0.1', 'qwertzuiopasdfghjkl3.com', '2026-11-30T00:04:00.000000Z'),
  ]);
  const third = batchOf('s3', [
    timed('w4', '10.0.0.1', 'qwertzuiopasdfghjkl4.com', '2026-11-30T00:04:30.000000Z'),
  ]);
  const r1 = await stage.process([jsonRecord('in', 0, first)], stageContext(state));
  const r2 = await stage.process([jsonRecord('in', 1, second)], stageContext(state));
  const r3 = await stage.process([jsonRecord('in', 2, third)], stageContext(state));
  assert.deepEqual(alertsOf(r1.outputs), []);
  assert.deepEqual(alertsOf(r3.outputs), [], 'a later warning of the fired window does not alert again');
  const [alert] = alertsOf(r2.outputs);
  assert.deepEqual(
    alert?.result.map((w) => w.request.logline_id),
    ['w1', 'w2', 'w3'],
  );
  assert.equal(alert?.suspicious_batch_id, 's2');
  assert.equal(alert?.window_start, '2026-11-30T00:00:00.000Z');
  assert.equal(alert?.window_end, '2026-11-30T00:05:00.000Z');
  // Every line of the alert is detected, those of the earlier batch too (a row of this batch).
  assert.deepEqual(
    monitoringRows(r2.outputs, 'logline_timestamps').map((r) => [r.logline_id, r.status, r.src_offset]),
    [
      ['b1', 'finished', 1],
      ['w3', 'detected', 1],
      ['w1', 'detected', 1],
      ['w2', 'detected', 1],
    ],
  );
});

test('the alert id names the window, not the batch: the same lines batched otherwise give the same id', async () => {
  const lines = [
    timed('w1', '10.0.0.1', 'qwertzuiopasdfghjkl1.com', '2026-11-30T00:01:00.000000Z'),
    timed('w2', '10.0.0.1', 'qwertzuiopasdfghjkl2.com', '2026-11-30T00:02:00.000000Z'),
  ];
  const detector = detectorConfig({ min_warnings: 2 });
  const one = await createDgaDetector({ detector, topics });
  const [whole] = alertsOf(
    (await one.process([jsonRecord('in', 0, batchOf('all', lines))], stageContext())).outputs,
  );
  const two = await createDgaDetector({ detector, topics });
  const state = new MemoryState();
  await two.process([jsonRecord('in', 0, batchOf('p1', [lines[0]!]))], stageContext(state));
  const [split] = alertsOf(
    (await two.process([jsonRecord('in', 1, batchOf('p2', [lines[1]!]))], stageContext(state))).outputs,
  );
  assert.ok(whole && split);
  assert.notEqual(whole.suspicious_batch_id, split.suspicious_batch_id);
  assert.equal(alertId(whole), alertId(split));
});

test('the timer drops the windows of a host idle for warning_idle_timeout_seconds', async () => {
  const stage = await createDgaDetector({
    detector: detectorConfig({ min_warnings: 3, warning_idle_timeout_seconds: 700 }),
    topics,
    clock: () => 1_000,
  });
  const state = new MemoryState();
  const one = batchOf('s1', [
    timed('w1', '10.0.0.1', 'qwertzuiopasdfghjkl1.com', '2026-11-30T00:01:00.000000Z'),
  ]);
  await stage.process([jsonRecord('in', 0, one)], stageContext(state));
  const store = () => state.partition(0).store(WARNING_WINDOWS_STORE);
  assert.equal(store().size, 1);
  await stage.onTimer?.(timerContext(state, 0, 1_000 + 700_000));
  assert.equal(store().size, 1);
  await stage.onTimer?.(timerContext(state, 0, 1_000 + 700_001));
  assert.equal(store().size, 0);
});
