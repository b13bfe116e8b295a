import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { validateConfig, type HamstringConfig } from '../../../../src/config/index.ts';
import { AlertFileWriter } from '../../../../src/stages/alerter/alert-file.ts';
import {
  createAlerter,
  decodeOutgoingAlert,
  type OutgoingAlert,
} from '../../../../src/stages/alerter/alerter.ts';
import { alertId } from '../../../../src/stages/detector/alerts.ts';
import type { Alert } from '../../../../src/stages/messages.ts';
import { minimalConfig, withValue } from '../../config/helpers.ts';
import { record, stageContext } from '../support/stage-context.ts';

const dir = mkdtempSync(join(tmpdir(), 'hamstring-alerter-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A detector's alert (no id: the alerter derives it). */
const detected = (batchId: string, ip = '10.0.0.1', scores = [0.9]): Alert => ({
  overall_score: scores[0] ?? 0,
  result: scores.map((p, i) => ({
    request: {
      logline_id: `${batchId}-${i}`,
      subnet_id: '10.0.0.0_24',
      ts: '2026-11-30T00:00:00.000000Z',
      src_ip: ip,
      domain_name: `x${i}.example${i}.com`,
    },
    probability: p,
  })),
  src_ip: ip,
  alert_timestamp: '2026-11-30T00:00:01.000Z',
  suspicious_batch_id: batchId,
  detector_name: 'dga_detector',
});
/** An outgoing alert with a given id (for the file writer). */
const alert = (id: string): OutgoingAlert => ({ alert_id: id, ...detected(id) });

function config(alerting: unknown): HamstringConfig {
  return validateConfig(withValue(minimalConfig(), ['pipeline', 'alerting'], alerting), { env: {} });
}
const lines = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as OutgoingAlert);

test('the file writer appends each alert id once, also across a reopen (a replay after a restart)', async () => {
  const path = join(dir, 'once.jsonl');
  const first = await AlertFileWriter.open(path);
  assert.equal(await first.append([alert('a'), alert('b'), alert('a')]), 2);
  assert.equal(await first.append([alert('b'), alert('c')]), 1);
  await first.close();
  const second = await AlertFileWriter.open(path);
  assert.ok(second.has('a') && second.has('b') && second.has('c'));
  assert.equal(await second.append([alert('a'), alert('c'), alert('d')]), 1);
  await second.close();
  assert.deepEqual(
    lines(path).map((a) => a.alert_id),
    ['a', 'b', 'c', 'd'],
  );
});

test('a half-written last line (crash mid-write) is cut at open, and that alert is written again', async () => {
  const path = join(dir, 'torn.jsonl');
  writeFileSync(path, `${JSON.stringify(alert('a'))}\n`);
  appendFileSync(path, JSON.stringify(alert('b')).slice(0, 25));
  const writer = await AlertFileWriter.open(path);
  assert.ok(writer.has('a'));
  assert.ok(!writer.has('b'));
  assert.equal(await writer.append([alert('b')]), 1);
  await writer.close();
  assert.deepEqual(
    lines(path).map((a) => a.alert_id),
    ['a', 'b'],
  );
});

test('the generic alerter produces to the external topic in its transaction and to the file once per id', async () => {
  const path = join(dir, 'generic.jsonl');
  const cfg = config({
    log_to_file: true,
    log_file_path: path,
    log_to_kafka: true,
    external_kafka_topic: 'alerts_out',
  });
  const file = await AlertFileWriter.open(path);
  try {
    const stage = createAlerter({ config: cfg, name: 'generic', file });
    assert.deepEqual(stage.inputTopics, ['pipeline-detector_to_alerter-generic']);
    const input = [
      record('pipeline-detector_to_alerter-generic', 0, detected('b1')),
      record('pipeline-detector_to_alerter-generic', 1, detected('b2', '10.0.0.2')),
    ];
    const first = await stage.process(input, stageContext());
    assert.deepEqual(
      first.outputs.map((o) => [o.topic, o.key, o.source?.offset]),
      [
        ['alerts_out', '10.0.0.1', 0],
        ['alerts_out', '10.0.0.2', 1],
      ],
    );
    const ids = [alertId(detected('b1')), alertId(detected('b2', '10.0.0.2'))];
    assert.deepEqual(
      first.outputs.map((o) => decodeOutgoingAlert(o.value as string).alert_id),
      ids,
      'the external topic carries the stable ids',
    );
    // The same batch again (its transaction aborted): the topic gets it again in the new
    // transaction, the file keeps one line per alert.
    const replay = await stage.process(input, stageContext());
    assert.equal(replay.outputs.length, 2);
    assert.deepEqual(
      lines(path).map((a) => a.alert_id),
      ids,
    );
  } finally {
    await file.close();
  }
});

test('a plugin alerter adjusts alerts: the allowlist drops known-good warnings and recomputes the median', async () => {
  const cfg = config({
    log_to_kafka: true,
    plugins: [
      {
        name: 'allow',
        alerter_module_name: 'plugins',
        alerter_class_name: 'AllowlistAlerter',
        options: { domains: ['example0.com'] },
      },
    ],
  });
  const stage = createAlerter({ config: cfg, name: 'allow' });
  assert.deepEqual(stage.inputTopics, ['pipeline-detector_to_alerter-allow']);
  const result = await stage.process(
    [
      record('t', 0, detected('a', '10.0.0.1', [0.99, 0.6, 0.8])),
      record('t', 1, detected('b', '10.0.0.2', [0.7])),
    ],
    stageContext(),
  );
  const out = result.outputs.map((o) => decodeOutgoingAlert(o.value as string));
  assert.equal(out.length, 1, 'the alert whose only warning is allowed is dropped');
  assert.deepEqual(
    out[0]?.result.map((w) => w.request.domain_name),
    ['x1.example1.com', 'x2.example2.com'],
  );
  assert.equal(out[0]?.overall_score, 0.7);
});

test('an unknown plugin class is a config error naming the key path', () => {
  const cfg = config({ plugins: [{ name: 'p', alerter_module_name: 'm', alerter_class_name: 'Nope' }] });
  assert.throws(
    () => createAlerter({ config: cfg, name: 'p' }),
    /pipeline\.alerting\.plugins\[0\]\.alerter_class_name: expected one of MinimumScoreAlerter, AllowlistAlerter, got "Nope"/,
  );
});

test('a record that is not an alert (or carries unknown keys) fails alone as a decode error', async () => {
  const stage = createAlerter({ config: config({ log_to_kafka: true }), name: 'generic' });
  const result = await stage.process(
    [record('t', 0, '{"x":1}'), record('t', 1, detected('a'))],
    stageContext(),
  );
  assert.equal(result.failures?.[0]?.record.offset, 0);
  assert.equal((result.failures?.[0]?.error as Error).name, 'DecodeError');
  assert.equal(result.outputs.length, 1);
});
