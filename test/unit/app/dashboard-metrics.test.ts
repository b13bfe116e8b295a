import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seriesOf, type MetricsPoint } from '../../../src/app/dashboard/metrics-history.ts';
import { scrapeSource, workerMetricsSource } from '../../../src/app/dashboard/metrics-source.ts';
import { parsePrometheusText } from '../../../src/app/dashboard/prometheus-text.ts';
import { aggregateSensorMetrics } from '../../../src/app/dashboard/sensor-metrics.ts';
import { aggregateStageMetrics } from '../../../src/app/dashboard/stage-metrics.ts';
import { sensorRegistry } from '../../../src/app/sensors/sensor-metrics.ts';
import { WorkerMetrics } from '../../../src/runtime/worker-metrics.ts';

test('the exposition parser reads labels with escapes, special values and timestamps', () => {
  const samples = parsePrometheusText(
    [
      '# HELP x_total things',
      '# TYPE x_total counter',
      'x_total{a="1",b="quote \\" back\\\\slash \\n newline"} 3 1700000000000',
      'y NaN',
      'z{le="+Inf"} +Inf',
      'w -Inf',
      'broken{a="unterminated} 1',
      '',
    ].join('\n'),
  );
  assert.deepEqual(samples[0], {
    name: 'x_total',
    labels: { a: '1', b: 'quote " back\\slash \n newline' },
    value: 3,
  });
  assert.ok(Number.isNaN(samples[1]?.value));
  assert.equal(samples[2]?.value, Number.POSITIVE_INFINITY);
  assert.equal(samples[3]?.value, Number.NEGATIVE_INFINITY);
  assert.equal(samples.length, 4, 'the unparsable line is skipped');
});

test("a worker registry's own exposition sums per stage over instances, in pipeline order", async () => {
  const a = new WorkerMetrics({ stage: 'data_analysis.detector', instance: 'd1' });
  const b = new WorkerMetrics({ stage: 'data_analysis.detector', instance: 'd2' });
  const c = new WorkerMetrics({ stage: 'log_collection.collector', instance: 'c1' });
  a.records.inc({ direction: 'in' }, 10);
  b.records.inc({ direction: 'in' }, 5);
  a.records.inc({ direction: 'out' }, 3);
  a.aborts.inc({ reason: 'membership' });
  b.aborts.inc({ reason: 'transport' }, 2);
  b.recoveries.inc({ kind: 'transport', action: 'reconnect' });
  a.commits.inc(4);
  a.lag.set(7);
  b.lag.set(8);
  a.up.set(1);
  a.alert.set({ condition: 'aborts_while_lag_grows' }, 1);
  b.alert.set({ condition: 'aborts_while_lag_grows' }, 0);
  c.commits.inc();
  const text = (await Promise.all([a, b, c].map((w) => w.registry.metrics()))).join('\n');
  const [collector, detector] = aggregateStageMetrics(parsePrometheusText(text));
  assert.equal(collector?.stage, 'log_collection.collector');
  assert.equal(collector?.commits, 1);
  assert.deepEqual(detector, {
    stage: 'data_analysis.detector',
    instances: 2,
    ready: 1,
    recordsIn: 15,
    recordsOut: 3,
    commits: 4,
    aborts: 3,
    recoveries: 1,
    lag: 15,
    alerts: {
      max_poll_exceeded_or_unknown_member: 0,
      repeated_recovery_after_revoke: 0,
      aborts_while_lag_grows: 1,
      no_commit_while_input_arrives: 0,
      records_below_commit: 0,
    },
  });
});

test("a sensor's registry reads as one row per sensor: its counters and what is pending", async () => {
  const counters = {
    received: 10,
    malformed: 1,
    ignored: 2,
    forwarded: 6,
    dropped: 0,
    failed: 1,
    pending: 3,
  };
  const registry = sensorRegistry(() => [{ name: 'edge', kind: 'dnstap', counters: () => counters }]);
  const samples = parsePrometheusText(await registry.metrics());
  assert.deepEqual(aggregateSensorMetrics(samples), [{ sensor: 'edge', kind: 'dnstap', ...counters }]);
  // Worker series carry no sensor label and are left to the stage table.
  assert.deepEqual(
    aggregateSensorMetrics([{ name: 'hamstring_worker_ready', labels: { stage: 's' }, value: 1 }]),
    [],
  );
});

test('rates come from consecutive samples; a counter that went down is a restarted worker', () => {
  const stage = (recordsIn: number, lag: number) => ({
    ...aggregateStageMetrics([{ name: 'hamstring_worker_ready', labels: { stage: 's' }, value: 1 }])[0]!,
    recordsIn,
    lag,
  });
  const points: MetricsPoint[] = [
    { at: 10_000, stages: [stage(100, 5)], sensors: [] },
    { at: 12_000, stages: [stage(300, 6)], sensors: [] },
    { at: 14_000, stages: [stage(40, 7)], sensors: [] },
    { at: 16_000, stages: [], sensors: [] },
  ];
  const series = seriesOf(points);
  assert.deepEqual(series.t, [10, 12, 14, 16]);
  assert.deepEqual(series.stages[0]?.recordsInPerSec, [null, 100, 20, null]);
  assert.deepEqual(series.stages[0]?.lag, [5, 6, 7, null]);
});

test("an in-process worker's source refreshes its gauges through status() before each read", async () => {
  const metrics = new WorkerMetrics({ stage: 'log_filtering.prefilter', instance: 'p1' });
  let conditionHolds = false;
  const worker = {
    metrics,
    status: () => metrics.alert.set({ condition: 'no_commit_while_input_arrives' }, conditionHolds ? 1 : 0),
  };
  const source = workerMetricsSource(worker);
  const read = async () =>
    aggregateStageMetrics(await scrapeSource(source, 1000))[0]!.alerts.no_commit_while_input_arrives;
  assert.equal(await read(), 0);
  conditionHolds = true;
  assert.equal(await read(), 1);
});
