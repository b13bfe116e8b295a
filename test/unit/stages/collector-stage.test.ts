import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Clock, ProcessResult, StageOutput } from '../../../src/runtime/index.ts';
import { createCollectorStage } from '../../../src/stages/collector/collector-stage.ts';
import { linesOfEntry } from '../../../src/stages/collector/stored-lines.ts';
import { stableId } from '../../../src/stages/ids.ts';
import { LINES_HEADER } from '../../../src/stages/line-frames.ts';
import { MemoryState } from '../../support/memory-state.ts';
import { record, stageContext, timerContext } from '../../support/stage-context.ts';
import { batchesSent, monitoringRows } from './outputs.ts';
import { configWithBatches, dnsLine } from './fixtures.ts';

const INPUT = 'pipeline-logserver_to_collector-dga_collector';
const OUTPUT = 'pipeline-batch_sender_to_prefilter-dga_prefilter';

function fixedClock(start = 1_000_000): Clock & { set(ms: number): void } {
  let now = start;
  return { now: () => now, sleep: () => Promise.resolve(), set: (ms) => (now = ms) };
}

function setup(batchSize = 3, timeoutSeconds = 2) {
  const clock = fixedClock();
  const stage = createCollectorStage({
    config: configWithBatches(batchSize, timeoutSeconds),
    collectorName: 'dga_collector',
    clock,
  });
  const state = new MemoryState(Object.keys(stage.stores ?? {}));
  const run = (values: string[], from = 0) =>
    stage.process(
      values.map((value, index) => record(INPUT, 0, from + index, value)),
      stageContext(state),
    ) as ProcessResult;
  return { stage, state, clock, run };
}

const batchesOf = (outputs: readonly StageOutput[]) => batchesSent(outputs, OUTPUT);
const at = (second: number, ip = '10.2.54.7') =>
  dnsLine({ ts: `2026-11-30T00:00:0${second}.000000Z`, src_ip: ip });

test('the stage reads its collector topic and writes to its prefilter and monitoring topics', () => {
  const { stage } = setup();
  assert.deepEqual(stage.inputTopics, [INPUT]);
  assert.ok(Array.isArray(stage.outputTopics) && stage.outputTopics.includes(OUTPUT));
  assert.deepEqual(Object.keys(stage.stores ?? {}), ['batches']);
  assert.equal(stage.timer?.intervalMs, 500, 'a quarter of the 2 s batch_timeout');
});

/** A valid line with an own "__proto__" key and one more field after it. */
const lineWithOwnProto = () =>
  dnsLine({ ts: '2026-11-30T00:00:01.000000Z' }).replace(/}$/, ',"__proto__":{"polluted":true},"extra":"x"}');

test('a batched line keeps its fields in their order, ts rewritten, ids added; its own "__proto__" stays data', () => {
  const { run } = setup(1);
  const line = lineWithOwnProto();
  const result = run([line]);
  const value = result.outputs.find((o) => o.topic === OUTPUT)?.value;
  assert.equal(typeof value, 'string');
  // The batch as the prefilter reads it: JSON.parse keeps an own "__proto__" key as data.
  const parsed = (JSON.parse(value as string) as { data: Record<string, unknown>[] }).data[0]!;
  // The input's own keys in their order, then the two ids.
  const input = Object.keys(JSON.parse(line) as object);
  assert.ok(input.includes('__proto__') && input.indexOf('extra') === input.length - 1);
  assert.deepEqual(Object.keys(parsed), [...input, 'logline_id', 'subnet_id']);
  assert.equal(parsed.ts, '2026-11-30T00:00:01.000000Z');
  assert.equal(parsed.subnet_id, '10.2.54.0_24');
  assert.deepEqual(Object.getOwnPropertyDescriptor(parsed, '__proto__')?.value, { polluted: true });
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test("a loglines row's additional_fields hold the fields without a column of their own, in order", () => {
  const { run } = setup(1);
  const line = lineWithOwnProto();
  const [row] = monitoringRows(run([line]).outputs, 'loglines');
  const extra = JSON.parse(String(row?.additional_fields)) as Record<string, unknown>;
  const columns = ['ts', 'src_ip', 'status_code', 'record_type'];
  const input = Object.keys(JSON.parse(line) as object);
  assert.deepEqual(
    Object.keys(extra),
    input.filter((key) => !columns.includes(key)),
  );
  assert.deepEqual(Object.getOwnPropertyDescriptor(extra, '__proto__')?.value, { polluted: true });
  assert.equal(row?.record_type, (JSON.parse(line) as { record_type: string }).record_type);
});

test('an invalid line becomes a failed_loglines row with its reason and the stage goes on', () => {
  const { run } = setup();
  const result = run([dnsLine({ record_type: 'SOA' }), at(1)]);
  const failed = monitoringRows(result.outputs, 'failed_loglines');
  assert.equal(failed.length, 1);
  assert.equal(
    failed[0]?.reason_for_failure,
    'field "record_type": "SOA" is not one of ["A","AAAA","TXT","CNAME","MX","NULL"]',
  );
  assert.equal(failed[0]?.src_offset, 0);
  assert.equal(monitoringRows(result.outputs, 'loglines').length, 1);
  assert.equal(result.failures, undefined);
});

test('a full batch leaves at once, keyed by subnet, sorted by ts, with ids derived from source positions', () => {
  const { run } = setup(3);
  const result = run([at(3), at(1), at(2)]);
  const [sent, ...more] = batchesOf(result.outputs);
  assert.equal(more.length, 0);
  assert.equal(sent?.key, '10.2.54.0_24');
  const data = sent.batch.data;
  assert.deepEqual(
    data.map((line) => line.ts),
    ['2026-11-30T00:00:01.000000Z', '2026-11-30T00:00:02.000000Z', '2026-11-30T00:00:03.000000Z'],
  );
  assert.equal(sent.batch.begin_timestamp, '2026-11-30T00:00:01.000000Z');
  assert.equal(sent.batch.end_timestamp, '2026-11-30T00:00:03.000000Z');
  assert.ok(data.every((line) => line.subnet_id === '10.2.54.0_24'));
  assert.equal(sent.batch.context_logline_ids, undefined);
  // The same records processed again on fresh state (a replay) yield the same ids.
  const again = batchesOf(setup(3).run([at(3), at(1), at(2)]).outputs)[0]!.batch;
  assert.equal(again.batch_id, sent.batch.batch_id);
  assert.deepEqual(
    again.data.map((l) => l.logline_id),
    data.map((l) => l.logline_id),
  );
  assert.equal(new Set(data.map((l) => l.logline_id)).size, 3);
});

test('each subnet batches on its own, IPv6 under its prefix length', () => {
  const { run } = setup(2);
  const result = run([at(1), at(1, '2001:db8:0:1::5'), at(2, '10.9.9.9'), at(2, '2001:db8:0:1::6')]);
  assert.deepEqual(
    batchesOf(result.outputs).map((b) => b.key),
    ['2001:db8:0:1::_64'],
  );
  const second = run([at(3)], 10);
  assert.deepEqual(
    batchesOf(second.outputs).map((b) => [b.key, b.batch.data.length]),
    [['10.2.54.0_24', 2]],
  );
});

test('a batch carries its subnet previous batch as context, and records only its new lines', () => {
  const { run } = setup(2);
  const first = batchesOf(run([at(1), at(2)]).outputs)[0]!.batch;
  const result = run([at(4), at(3)], 2);
  const second = batchesOf(result.outputs)[0]!.batch;
  assert.equal(second.data.length, 4);
  assert.deepEqual(
    second.data.map((l) => l.ts.slice(17, 19)),
    ['01', '02', '03', '04'],
  );
  assert.deepEqual(
    second.context_logline_ids,
    first.data.map((l) => l.logline_id),
  );
  assert.notEqual(second.batch_id, first.batch_id);
  const linked = monitoringRows(result.outputs, 'logline_to_batches');
  assert.deepEqual(linked.map((r) => r.src_offset).sort(), [2, 3]);
  assert.ok(linked.every((r) => r.batch_id === second.batch_id));
});

test('the timer sends a batch once it has waited batch_timeout, not before', () => {
  const { stage, state, run } = setup(100, 2);
  run([at(1)]);
  const early = stage.onTimer!(timerContext(state, 0, 1_000_000 + 100)) as ProcessResult;
  assert.equal(batchesOf(early.outputs).length, 0);
  assert.deepEqual(
    monitoringRows(early.outputs, 'fill_levels').map((r) => [r.entry_type, r.entry_count]),
    [
      ['total_loglines', 1],
      ['open_batches', 1],
    ],
  );
  const due = stage.onTimer!(timerContext(state, 0, 1_000_000 + 2_000)) as ProcessResult;
  const sent = batchesOf(due.outputs);
  assert.equal(sent.length, 1);
  assert.equal(sent[0]?.batch.data.length, 1);
  assert.ok(due.outputs.filter((o) => o.topic === OUTPUT).every((o) => o.source === undefined));
  assert.equal(monitoringRows(due.outputs, 'batch_timestamps')[0]?.status, 'completed');
  assert.deepEqual(
    monitoringRows(due.outputs, 'fill_levels').map((r) => [r.entry_type, r.entry_count]),
    [
      ['total_loglines', 0],
      ['open_batches', 0],
    ],
  );
  const after = stage.onTimer!(timerContext(state, 0, 1_000_000 + 4_000)) as ProcessResult;
  assert.deepEqual(after.outputs, [], 'nothing sent and the level reported this period: no output');
  const next = stage.onTimer!(timerContext(state, 0, 1_000_000 + 5_000)) as ProcessResult;
  assert.equal(monitoringRows(next.outputs, 'fill_levels')[0]?.entry_count, 0, 'reported each period');
});

test('a timer call that comes late is still the first of its period: the fill level is reported', () => {
  const { stage, state } = setup(100, 2); // timer every 500 ms, fill level every 5 s
  const levels = (now: number) =>
    monitoringRows((stage.onTimer!(timerContext(state, 0, now)) as ProcessResult).outputs, 'fill_levels');
  assert.equal(levels(1_004_900).length, 2, 'the first call reports');
  assert.equal(levels(1_004_950).length, 0, 'a second call in the same period does not');
  // 700 ms after the last call (a span held it back): more than an interval into the next period.
  assert.equal(levels(1_005_650).length, 2, 'the late first call of the next period reports');
});

test('while lines flow, a batch past its timeout leaves with them, not only with the timer', () => {
  const { run, clock } = setup(100, 2);
  run([at(1)]);
  assert.equal(batchesOf(run([at(2)], 1).outputs).length, 0);
  clock.set(1_000_000 + 2_000);
  const sent = batchesOf(run([at(3, '10.9.9.9')], 2).outputs);
  assert.deepEqual(
    sent.map((b) => b.batch.data.length),
    [2],
  );
});

test('the store keeps each waiting line with its source position only, never the input record', () => {
  const { state, run } = setup(3);
  run([at(1), at(2)]);
  const stored = [...state.partition(0).store<unknown>('batches').range()];
  const lines = stored.filter(([key]) => key.startsWith('l/')).flatMap(([, v]) => linesOfEntry(v));
  const open = stored.filter(([key]) => key.startsWith('o/')).map(([, v]) => v as { lastSource: object });
  assert.equal(lines.length, 2);
  assert.equal(open.length, 1);
  for (const position of [...lines.map((l) => l.source), open[0]!.lastSource])
    assert.deepEqual(Object.keys(position).sort(), ['offset', 'partition', 'topic']);
});

test('context of a subnet quiet for ten batch timeouts is dropped', () => {
  const { stage, state, run, clock } = setup(1, 1);
  run([at(1)]);
  void stage.onTimer!(timerContext(state, 0, 1_000_000 + 10_000));
  clock.set(1_000_000 + 10_001);
  const next = batchesOf(run([at(2)], 1).outputs)[0]!.batch;
  assert.equal(next.data.length, 1);
  assert.equal(next.context_logline_ids, undefined);
});

test('monitoring rows of one line never share an identity', () => {
  const { run } = setup(1);
  const result = run([at(1)]);
  const identities = result.outputs
    .filter((o) => String(o.topic).startsWith('clickhouse_'))
    .flatMap((o) =>
      monitoringRows([o], o.topic.slice('clickhouse_'.length)).map((row) => ({ topic: o.topic, row })),
    )
    .map(
      ({ topic, row }) =>
        `${topic}/${String(row.src_topic)}/${String(row.src_offset)}/${String(row.row_index)}`,
    );
  assert.equal(new Set(identities).size, identities.length);
  assert.deepEqual(
    monitoringRows(result.outputs, 'logline_timestamps').map((r) => r.status),
    ['in_process', 'batched'],
  );
});

test('hostile lines mixed into valid traffic: each recorded once with a reason, every valid line batched', () => {
  const { stage, state } = setup(7, 1);
  const hostile: (string | Buffer)[] = [
    'x'.repeat(20_000),
    Buffer.from([0x7b, 0xff, 0x7d]),
    `${'{"a":'.repeat(40)}1${'}'.repeat(40)}`,
    dnsLine({ domain_name: `${'a'.repeat(300)}.org` }),
    dnsLine({ ts: undefined }),
    '',
  ];
  const values = Array.from({ length: 600 }, (_, i) =>
    i % 2 === 0 ? hostile[(i / 2) % hostile.length]! : at(i % 10),
  );
  const records = values.map((value, offset) => record(INPUT, 0, offset, value));
  const outputs: StageOutput[] = [];
  for (let from = 0; from < records.length; from += 50) {
    outputs.push(
      ...(stage.process(records.slice(from, from + 50), stageContext(state)) as ProcessResult).outputs,
    );
  }
  outputs.push(...(stage.onTimer!(timerContext(state, 0, 10_000_000)) as ProcessResult).outputs);
  const failed = monitoringRows(outputs, 'failed_loglines');
  assert.equal(failed.length, 300);
  assert.ok(
    failed.every((row) => typeof row.reason_for_failure === 'string' && row.reason_for_failure !== ''),
  );
  assert.ok(failed.every((row) => (row.message_text as string).length <= 4096));
  const batched = batchesOf(outputs).flatMap(({ batch }) => {
    const context = new Set(batch.context_logline_ids ?? []);
    return batch.data.filter((l) => !context.has(l.logline_id)).map((l) => l.logline_id);
  });
  assert.equal(batched.length, 300);
  assert.equal(new Set(batched).size, 300);
});

test('the lines one call adds to a subnet are one store entry, and the batch still holds each of them once', () => {
  const { run, state } = setup(6);
  run([at(1), at(2), at(3)]);
  const lineKeys = () =>
    Object.keys(state.partition(0).snapshot().batches ?? {}).filter((k) => k.startsWith('l/'));
  assert.equal(lineKeys().length, 1);
  run([at(4), at(5)], 3);
  assert.equal(lineKeys().length, 2);
  const sent = batchesOf(run([at(6), at(7)], 5).outputs);
  assert.deepEqual(
    sent.map((b) => b.batch.data.map((l) => l.ts.slice(17, 19))),
    [['01', '02', '03', '04', '05', '06']],
  );
  assert.equal(lineKeys().length, 1, 'the line after the full batch starts the next one');
});

test('the lines of a frame are lines of their own: an id and row indexes each, their index kept with them in the store', () => {
  const { stage, state, clock } = setup(3);
  const frame = {
    ...record(INPUT, 0, 9, [at(1), 'not json', at(2), at(3, '10.9.9.9')].join('\n')),
    headers: { [LINES_HEADER]: Buffer.from('4') },
  };
  const { outputs } = stage.process(
    [frame, record(INPUT, 0, 10, at(4))],
    stageContext(state),
  ) as ProcessResult;
  const rows = (table: string) =>
    monitoringRows(outputs, table).map((r) => [r.src_offset, r.row_index, r.logline_id ?? r.batch_id]);
  const id = (offset: number, line?: number) =>
    line === undefined ? stableId('logline', INPUT, 0, offset) : stableId('logline', INPUT, 0, offset, line);
  assert.deepEqual(rows('loglines'), [
    [9, 0, id(9, 0)],
    [9, 2, id(9, 2)],
    [9, 3, id(9, 3)],
    [10, 0, id(10)],
  ]);
  assert.deepEqual(
    monitoringRows(outputs, 'failed_loglines').map((r) => [r.src_offset, r.row_index, r.message_text]),
    [[9, 1, 'not json']],
  );
  const stamps = monitoringRows(outputs, 'logline_timestamps').map(
    (r) => `${String(r.src_offset)}/${String(r.row_index)}`,
  );
  assert.deepEqual(stamps, ['9/0', '9/1', '9/4', '9/5', '9/6', '9/7', '10/0', '10/1']);
  // The subnet 10.2.54.0/24 filled its batch of 3 with the record at offset 10 (its source).
  const [sent] = batchesOf(outputs);
  assert.deepEqual(
    sent?.batch.data.map((l) => l.logline_id),
    [id(9, 0), id(9, 2), id(10)],
  );
  assert.equal(outputs.find((o) => o.topic === OUTPUT)?.source?.offset, 10);
  assert.deepEqual(
    monitoringRows(outputs, 'logline_to_batches').map((r) => [r.src_offset, r.row_index]),
    [
      [9, 0],
      [9, 2],
      [10, 0],
    ],
  );
  // The other subnet's line waits in the store with its index, and its batch's rows carry it.
  const stored = Object.entries(state.partition(0).snapshot().batches ?? {})
    .filter(([key]) => key.startsWith('l/10.9.9.0_24'))
    .flatMap(([, value]) => linesOfEntry(value));
  assert.deepEqual(
    stored.map((l) => l.source),
    [{ topic: INPUT, partition: 0, offset: 9, line: 3 }],
  );
  clock.set(1_000_000 + 3_000);
  const timed = stage.onTimer!(timerContext(state, 0, clock.now())) as ProcessResult;
  assert.deepEqual(
    ['batch_timestamps', 'batch_tree', 'logline_to_batches'].map((table) =>
      monitoringRows(timed.outputs, table).map((r) => [r.src_offset, r.row_index]),
    ),
    [[[9, 3]], [[9, 3]], [[9, 3]]],
  );
});
