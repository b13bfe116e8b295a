import assert from 'node:assert/strict';
import { test } from 'node:test';
import { alertId } from '../../../../src/stages/detector/index.ts';
import { accountLines } from '../../../../src/verify/pipeline/line-fates.ts';
import { Scenario } from './scenario.ts';

/**
 * Lines 0..4: rejected, filtered, judged normal, scored, alerted. `framed`: the logserver forwards
 * line 0 in a frame of its own and lines 1..4 in one frame, rather than a record per line.
 */
function everyFate(framed = false): Scenario {
  const s = new Scenario();
  if (framed) s.arriveFramed([0], false).reject(0).arriveFramed([1, 2, 3, 4]);
  else {
    s.arrive(0, false).reject(0);
    for (const id of [1, 2, 3, 4]) s.arrive(id);
  }
  const collected = s.collect([1, 2, 3, 4]);
  const passed = s.prefilter(collected, [2, 3, 4]);
  assert.ok(passed);
  const suspicious = s.inspect(passed, [2], [3, 4]);
  assert.ok(suspicious);
  s.detect(suspicious, [4]);
  return s;
}

test('each line gets its fate: rejected, filtered, normal, scored, alerted; a clean run is ok', () => {
  const s = everyFate();
  const report = accountLines(s.input, s.read());
  assert.deepEqual(report.fates, { rejected: 1, filtered: 1, normal: 1, scored: 1, alerted: 1 });
  assert.deepEqual(report.paths[0]?.fates, report.fates);
  assert.deepEqual(report.lost, []);
  assert.deepEqual(report.inTwoBatches, []);
  assert.deepEqual([report.monitoringMissing, report.monitoringTwice], [[], []]);
  assert.equal(report.monitoringChecked, true);
  assert.deepEqual(report.alertedHosts, ['10.0.0.4']);
  assert.deepEqual(report.problems, []);
  assert.equal(report.ok, true);
});

test('lines the logserver forwarded as one frame are accounted one by one, their rows by their index in it', () => {
  const s = everyFate(true);
  const report = accountLines(s.input, s.read());
  assert.deepEqual(report.fates, { rejected: 1, filtered: 1, normal: 1, scored: 1, alerted: 1 });
  assert.deepEqual([report.monitoringMissing, report.monitoringTwice], [[], []]);
  assert.equal(report.ok, true);
});

test("a frame's rejected line is found by its row's index: a row under another index is another line's", () => {
  const s = new Scenario();
  s.arriveFramed([0, 1], false).reject(0).reject(1, 0);
  const report = accountLines(s.input, s.read());
  assert.equal(report.fates.rejected, 1);
  assert.deepEqual(report.lost, [1]);
  assert.equal(report.ok, false);
});

test('a line without a fate is lost, with the step it never came out of; one never received too', () => {
  const s = new Scenario();
  s.arrive(1).arrive(2);
  const passed = s.prefilter(s.collect([1, 2]), [1, 2]);
  assert.ok(passed);
  // The inspector decides line 1 only: line 2 stays in no verdict.
  s.inspect(passed, [1], []);
  const report = accountLines([...s.input, { id: 3, valid: true }], s.read());
  assert.deepEqual(report.lost, [2, 3]);
  assert.deepEqual(report.paths[0]?.lost, [
    { line: 2, at: 'inspector' },
    { line: 3, at: 'logserver' },
  ]);
  assert.deepEqual(report.fates, { rejected: 0, filtered: 0, normal: 1, scored: 0, alerted: 0 });
  assert.equal(report.ok, false);
  assert.match(report.problems[0] ?? '', /^2 line\(s\) lost .*line 2 after the inspector/);
});

test('a line fresh in two collector batches is in two batches', () => {
  const s = new Scenario();
  s.arrive(1).arrive(2);
  s.prefilter(s.collect([1, 2]), []);
  s.prefilter(s.collect([2]), []);
  const report = accountLines(s.input, s.read());
  assert.deepEqual(report.inTwoBatches, [2]);
  assert.ok(
    report.twice.some((t) => t.line === 2 && t.where.startsWith('fresh in collector batches 2 times')),
  );
  assert.equal(report.ok, false);
});

test('context lines carried into the next batch do not count as a second appearance', () => {
  const s = new Scenario();
  for (const id of [1, 2, 3]) s.arrive(id);
  const first = s.prefilter(s.collect([1, 2]), [1, 2]);
  const second = s.prefilter(s.collect([3], [1, 2]), [1, 2, 3]);
  assert.ok(first && second);
  assert.deepEqual(
    second.batch.context_logline_ids?.length,
    2,
    'the second batch carries 1 and 2 as context',
  );
  s.inspect(first, [1, 2], []);
  s.inspect(second, [3], []);
  const report = accountLines(s.input, s.read());
  assert.deepEqual(report.inTwoBatches, []);
  assert.deepEqual(report.fates.normal, 3);
  assert.deepEqual(report.problems, []);
});

test('a batch produced again to the inspector is inspected twice: the batch, its lines and its rows are reported', () => {
  const s = new Scenario();
  s.arrive(1);
  const passed = s.prefilter(s.collect([1]), [1]);
  assert.ok(passed);
  s.inspect(passed, [1], []);
  s.inspect(s.again(passed), [1], []);
  const report = accountLines(s.input, s.read());
  assert.deepEqual(report.batchesInspectedTwice, [passed.batch.batch_id]);
  assert.deepEqual(report.inTwoBatches, [1]);
  assert.ok(
    report.monitoringTwice.some(
      (f) => f.table === 'batch_timestamps' && f.id === `batch inspected by i: ${passed.batch.batch_id}`,
    ),
  );
  assert.equal(report.ok, false);
});

test('the same alert twice on the alerter topic is an alert raised twice', () => {
  const s = everyFate();
  const alert = s.alerts[0];
  assert.ok(alert);
  s.again(alert);
  const report = accountLines(s.input, s.read());
  assert.deepEqual(report.alertsTwice, [`a-in: ${alertId(alert.alert)}`]);
  assert.deepEqual(report.lost, []);
  assert.equal(report.ok, false);
});

test('a monitoring row missing and one visible twice (two identities, same line) are reported', () => {
  const s = everyFate();
  const loglines = s.rows.get('loglines') ?? [];
  const dropped = loglines[0];
  const copied = loglines[1];
  assert.ok(dropped && copied);
  s.rows.set('loglines', [...loglines.slice(1), { ...copied, src_offset: 1_000_000 }]);
  const report = accountLines(s.input, s.read());
  assert.deepEqual(report.monitoringMissing, [{ table: 'loglines', id: 'accepted by c: 1' }]);
  assert.deepEqual(report.monitoringTwice, [{ table: 'loglines', id: 'accepted by c: 2' }]);
  assert.deepEqual(report.lost, [], 'monitoring does not decide fates');
  assert.equal(report.ok, false);
});

test('a valid line rejected and an invalid one let through are misjudged; no ClickHouse read is not a clean monitoring', () => {
  const s = new Scenario();
  s.arrive(1).reject(1);
  s.arrive(2, false);
  s.prefilter(s.collect([2]), []);
  const report = accountLines(s.input, { ...s.read(), clickhouseRows: undefined });
  assert.deepEqual(report.misjudged, [
    { line: 1, valid: true },
    { line: 2, valid: false },
  ]);
  assert.equal(report.monitoringChecked, false);
  assert.equal(report.ok, false);
});
