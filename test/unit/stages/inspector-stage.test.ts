import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { HamstringConfig } from '../../../src/config/index.ts';
import type { ProcessResult, StageOutput } from '../../../src/runtime/index.ts';
import { createInspectorStage } from '../../../src/stages/inspector/inspector-stage.ts';
import type { SubnetModel } from '../../../src/stages/inspector/bin-stream.ts';
import { encodeBatch, type Batch, type LogLine } from '../../../src/stages/messages.ts';
import { MemoryState } from '../../support/memory-state.ts';
import { record, stageContext, timerContext } from '../../support/stage-context.ts';
import { batch, line } from './batches.ts';
import { batchesSent, monitoringRows } from './outputs.ts';
import { shippedConfig } from './fixtures.ts';

const INPUT = 'pipeline-prefilter_to_inspector-dga_inspector';
const OUTPUT = 'pipeline-inspector_to_detector-dga_detector';

function withInspector(overrides: Record<string, unknown>): HamstringConfig {
  const config = shippedConfig();
  const inspectors = config.pipeline.data_inspection.map((entry) => ({ ...entry, ...overrides }));
  return { ...config, pipeline: { ...config.pipeline, data_inspection: inspectors } };
}

function runner(config: HamstringConfig) {
  const stage = createInspectorStage({ config, inspectorName: 'dga_inspector' });
  const state = new MemoryState(Object.keys(stage.stores ?? {}));
  let offset = 0;
  const run = (...batches: Batch[]) =>
    stage.process(
      batches.map((b) => record(INPUT, 0, offset++, encodeBatch(b), b.data[0]?.subnet_id ?? null)),
      stageContext(state),
    ) as ProcessResult;
  return { stage, state, run };
}

const sent = (outputs: readonly StageOutput[]) => batchesSent(outputs, OUTPUT);

/** One request every 20 ms from `from` seconds on: a steady series of count 1 per bin. */
const steady = (
  prefix: string,
  from: number,
  count: number,
  fields: Record<string, unknown> = {},
): LogLine[] =>
  Array.from({ length: count }, (_, i) => line(`${prefix}${i}`, from + i * 0.02 + 0.001, fields));

test('NoInspector passes every batch on, split per src_ip and keyed by it', () => {
  const { stage, run } = runner(withInspector({ inspector_class_name: 'NoInspector' }));
  assert.equal(stage.stores, undefined);
  const input = batch([line('a', 1), line('b', 2, { src_ip: '10.2.54.9' }), line('c', 3)]);
  const result = run(input);
  const parts = sent(result.outputs);
  assert.deepEqual(
    parts.map((p) => [p.key, p.batch.data.map((l) => l.logline_id)]),
    [
      ['10.2.54.7', ['a', 'c']],
      ['10.2.54.9', ['b']],
    ],
  );
  assert.notEqual(parts[0]?.batch.batch_id, parts[1]?.batch.batch_id);
  assert.equal(
    sent(runner(withInspector({ inspector_class_name: 'NoInspector' })).run(input).outputs)[0]?.batch
      .batch_id,
    parts[0]?.batch.batch_id,
  );
  assert.deepEqual(
    monitoringRows(result.outputs, 'suspicious_batches_to_batch').map((r) => r.batch_id),
    ['batch-1', 'batch-1'],
  );
  assert.deepEqual(
    monitoringRows(result.outputs, 'batch_tree').map((r) => r.parent_batch_row_id),
    ['row-1', 'row-1'],
  );
});

test('NoInspector keeps the context marks: a line carried over from the previous batch stays context in the suspicious batches', () => {
  const { run } = runner(withInspector({ inspector_class_name: 'NoInspector' }));
  const input = batch(
    [line('old-a', 1), line('old-b', 2, { src_ip: '10.2.54.9' }), line('new', 3)],
    ['old-a', 'old-b'],
  );
  const parts = sent(run(input).outputs);
  assert.deepEqual(
    parts.map((p) => [p.key, p.batch.data.map((l) => l.logline_id), p.batch.context_logline_ids]),
    [
      ['10.2.54.7', ['old-a', 'new'], ['old-a']],
      ['10.2.54.9', ['old-b'], ['old-b']],
    ],
  );
});

test('a steady batch is not suspicious: nothing is sent and its lines finish as their span ends', () => {
  const { run } = runner(withInspector({}));
  const first = run(batch(steady('s', 0, 50)));
  assert.equal(monitoringRows(first.outputs, 'logline_timestamps').length, 0, 'the span (1 s) waits');
  // The series goes on as steady: after a quiet second, one line would be a burst of its own.
  const second = run(batch(steady('t', 1, 50)));
  assert.equal(
    monitoringRows(second.outputs, 'logline_timestamps').length,
    0,
    'a closed bin of the next span ends the first; its lines wait for the next to end too',
  );
  const result = run(batch(steady('u', 2, 2)));
  assert.equal(sent([...second.outputs, ...result.outputs]).length, 0);
  const finished = monitoringRows(result.outputs, 'logline_timestamps');
  assert.equal(finished.length, 50, 'no host was anomalous in the next span either: they finish');
  assert.ok(finished.every((r) => r.status === 'finished' && r.is_active === 0));
});

test('a burst after a steady history is suspicious (counts summed in its bin); the same without it is not', () => {
  // Two lines of the next second: the first one's bin closes, which ends the burst's span.
  const next = [line('u1', 2.001), line('u2', 2.021)];
  const quiet = runner(withInspector({}));
  quiet.run(batch(steady('s', 0, 50)));
  assert.equal(sent(quiet.run(batch([...steady('t', 1, 20), ...next])).outputs).length, 0);

  const { run } = runner(withInspector({}));
  run(batch(steady('s', 0, 50)));
  const burst = Array.from({ length: 10 }, (_, i) =>
    line(`b${i}`, 1.002 + i * 0.001, { src_ip: '10.2.54.66' }),
  );
  const result = run(
    batch([...steady('t', 1, 20), ...burst, ...next].sort((a, b) => (a.ts < b.ts ? -1 : 1))),
  );
  assert.deepEqual(
    sent(result.outputs)
      .map((p) => p.key)
      .sort(),
    ['10.2.54.66', '10.2.54.7'],
  );
});

test('a burst after a long pause (a restart) is judged as without it', () => {
  // About one NXDOMAIN line a second, and a host resolving 25 names within one second.
  const sparse = (prefix: string, from: number) =>
    Array.from({ length: 36 }, (_, i) => line(`${prefix}${i}`, from + i * 0.83 + 0.001));
  const burst = (from: number) =>
    Array.from({ length: 25 }, (_, i) => line(`b${i}`, from + i * 0.04 + 0.001, { src_ip: '10.2.54.66' }));
  const verdict = (pauseSeconds: number) => {
    const { run } = runner(withInspector({}));
    run(batch(sparse('h', 0)));
    const start = 30 + pauseSeconds;
    const lines = [...sparse('n', start), ...burst(start + 10)].sort((x, y) => (x.ts < y.ts ? -1 : 1));
    return sent(run(batch(lines)).outputs)
      .map((p) => p.key)
      .sort();
  };
  assert.deepEqual(verdict(0), ['10.2.54.66', '10.2.54.7']);
  // Five minutes are 15,000 empty 20 ms bins, ten times the batch's own 1,450.
  assert.deepEqual(verdict(300), verdict(0));
});

test('model state is kept per subnet and context lines are not scored twice', () => {
  const { run, state } = runner(withInspector({}));
  const other = (l: LogLine): LogLine => ({ ...l, subnet_id: '10.9.9.0_24', src_ip: '10.9.9.1' });
  run(batch(steady('a', 0, 10)), batch(steady('o', 0, 3).map(other)));
  const store = state.partition(0).store<SubnetModel>('models');
  const first = store.get('10.2.54.0_24');
  const bin0 = Date.parse('2026-11-30T00:00:00Z') / 20;
  assert.deepEqual([first?.lastBin, first?.open?.bin], [bin0 + 8, bin0 + 9]);
  assert.deepEqual(
    [store.get('10.9.9.0_24')?.lastBin, store.get('10.9.9.0_24')?.open?.bin],
    [bin0 + 1, bin0 + 2],
  );
  const window = (first?.states[0] as { window: number[] }).window;
  assert.equal(window.length, 9, 'nine bins closed, the tenth open');
  const previous = steady('a', 0, 10);
  run(
    batch(
      [...previous, ...steady('n', 0.2, 5)],
      previous.map((l) => l.logline_id),
    ),
  );
  const after = (store.get('10.2.54.0_24')?.states[0] as { window: number[] }).window;
  assert.equal(after.length, 14, 'the open bin and four new ones closed; context lines not counted again');
});

test('a record that is not a Batch is dead-lettered alone', () => {
  const { stage } = runner(withInspector({}));
  const result = stage.process(
    [record(INPUT, 0, 0, '{"batch_id": 1}')],
    stageContext(new MemoryState()),
  ) as ProcessResult;
  assert.equal((result.failures?.[0]?.error as Error).name, 'DecodeError');
});

test('multivariate Loda and ensemble modes run from the config and keep one state per model', () => {
  const loda = { model: 'LodaDetector', module: 'streamad.model', model_args: { seed: 3 } };
  const multi = runner(withInspector({ mode: 'multivariate', models: [loda] }));
  multi.run(batch(steady('m', 0, 30, { size: '120b' })));
  const lodaState = multi.state.partition(0).store<SubnetModel>('models').get('10.2.54.0_24');
  assert.deepEqual((lodaState?.states[0] as { window: number[][] }).window[0], [1, 120]);

  const models = [
    { model: 'ZScoreDetector', module: 'streamad.model', model_args: {} },
    { model: 'EWMADetector', module: 'streamad.model', model_args: { alpha: 0.2 } },
  ];
  const ensemble = { model: 'VoteEnsemble', module: 'streamad.process', model_args: { threshold: 0.5 } };
  const mixed = runner(withInspector({ mode: 'ensemble', models, ensemble }));
  mixed.run(batch(steady('e', 0, 30)));
  const states = mixed.state.partition(0).store<SubnetModel>('models').get('10.2.54.0_24')?.states;
  assert.equal(states?.length, 2);
  assert.equal((states?.[1] as { n: number }).n, 29, 'every closed bin learnt once');
});

test("a quiet subnet's newest bin is closed by the timer once it waited twice batch_timeout, and its burst goes on", () => {
  const { stage, state, run } = runner(withInspector({}));
  const burst = Array.from({ length: 10 }, (_, i) =>
    line(`b${i}`, 1.002 + i * 0.001, { src_ip: '10.2.54.66' }),
  );
  assert.equal(
    sent(run(batch([...steady('s', 0, 50), ...burst])).outputs).length,
    0,
    'the burst bin is open',
  );
  const early = stage.onTimer!(timerContext(state, 0, Date.now() + 1_000)) as ProcessResult;
  assert.deepEqual(early.outputs, []);
  // batch_timeout is 30 s: the next batch of an active subnet may come that late.
  const once = stage.onTimer!(timerContext(state, 0, Date.now() + 31_000)) as ProcessResult;
  assert.deepEqual(once.outputs, []);
  const late = stage.onTimer!(timerContext(state, 0, Date.now() + 61_000)) as ProcessResult;
  assert.deepEqual(
    sent(late.outputs).map((p) => [p.key, p.batch.data.length]),
    [['10.2.54.66', 10]],
  );
  assert.equal(state.partition(0).store<SubnetModel>('models').get('10.2.54.0_24')?.open, undefined);
});

test('the lines sent on do not depend on how the same lines are cut into batches', () => {
  // Ten seconds of one subnet: benign hosts every 80-160 ms, one host bursting now and then. At the
  // shipped score_threshold the model, still learning, finds a bin of every host in some span
  // anomalous and all lines go on; at 0.9 about half do.
  let seed = 5;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const lines: LogLine[] = [];
  for (let host = 1; host <= 8; host += 1)
    for (let t = next() * 0.1; t < 10; t += 0.08 + next() * 0.08)
      lines.push(line(`b${host}-${lines.length}`, t, { src_ip: `10.2.54.${host}` }));
  for (const at of [2.5, 6.1])
    for (let i = 0; i < 8; i += 1)
      lines.push(line(`x-${at}-${i}`, at + 0.0005 + i * 0.002, { src_ip: '10.2.54.66' }));
  lines.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
  const sentIds = (size: number): string[] => {
    const { stage, state, run } = runner(withInspector({ score_threshold: 0.9 }));
    const ids: string[] = [];
    for (let at = 0; at < lines.length; at += size)
      for (const p of sent(run(batch(lines.slice(at, at + size))).outputs))
        ids.push(...p.batch.data.map((l) => l.logline_id));
    const last = stage.onTimer!(timerContext(state, 0, Date.now() + 120_000)) as ProcessResult;
    for (const p of sent(last.outputs)) ids.push(...p.batch.data.map((l) => l.logline_id));
    return ids.sort();
  };
  const whole = sentIds(lines.length);
  assert.ok(
    whole.some((id) => id.startsWith('x-')),
    'the bursts are found',
  );
  assert.ok(whole.length < lines.length, `${whole.length} of ${lines.length} lines sent on`);
  for (const size of [1, 7, 40, 300]) assert.deepEqual(sentIds(size), whole, `batches of ${size}`);
});
