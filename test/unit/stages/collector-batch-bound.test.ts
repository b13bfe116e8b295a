import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Clock, ProcessResult, StageOutput } from '../../../src/runtime/index.ts';
import { BATCH_ENVELOPE_BYTES, lineBudget } from '../../../src/stages/collector/batch-buffer.ts';
import { lineCost, type ContextEntry, type LinesEntry } from '../../../src/stages/collector/stored-lines.ts';
import { createCollectorStage } from '../../../src/stages/collector/collector-stage.ts';
import { stableId } from '../../../src/stages/ids.ts';
import type { Batch, LogLine } from '../../../src/stages/messages.ts';
import { MemoryState } from '../../support/memory-state.ts';
import { record, stageContext, timerContext } from '../../support/stage-context.ts';
import { batchesSent, monitoringRows } from './outputs.ts';
import { configWithBatches, dnsLine } from './fixtures.ts';

const INPUT = 'pipeline-logserver_to_collector-dga_collector';
const OUTPUT = 'pipeline-batch_sender_to_prefilter-dga_prefilter';
const BOUND = 65_536;
const START = 1_000_000;

/** A line of about 1 KB (the demo's lines are about 950 bytes), `i` microseconds into the day. */
const bigLine = (i: number, ip = '10.2.54.7', padding = 820) =>
  dnsLine({
    ts: `2026-11-30T00:00:00.${String(i).padStart(6, '0')}Z`,
    src_ip: ip,
    padding: 'x'.repeat(padding),
  });

const idAt = (offset: number) => stableId('logline', INPUT, 0, offset);

function setup(maxBatchBytes: number, state?: MemoryState, maxLineBytes?: number) {
  let now = START;
  const clock: Clock = { now: () => now, sleep: () => Promise.resolve() };
  const config = configWithBatches(2000, 30, maxBatchBytes);
  const collectors = config.pipeline.log_collection.collectors.map((c) => ({
    ...c,
    max_line_bytes: maxLineBytes ?? c.max_line_bytes,
  }));
  const stage = createCollectorStage({
    config: {
      ...config,
      pipeline: { ...config.pipeline, log_collection: { ...config.pipeline.log_collection, collectors } },
    },
    collectorName: 'dga_collector',
    clock,
  });
  const memory = state ?? new MemoryState(Object.keys(stage.stores ?? {}));
  const run = (values: readonly string[], from: number) =>
    (
      stage.process(
        values.map((value, index) => record(INPUT, 0, from + index, value)),
        stageContext(memory),
      ) as ProcessResult
    ).outputs;
  const timer = (at: number) => {
    now = at;
    return (stage.onTimer!(timerContext(memory, 0, at)) as ProcessResult).outputs;
  };
  return { state: memory, run, timer, store: () => memory.partition(0).store<unknown>('batches') };
}

const sentTo = (outputs: readonly StageOutput[]) => outputs.filter((o) => o.topic === OUTPUT);
const batches = (outputs: readonly StageOutput[]): Batch[] =>
  batchesSent(outputs, OUTPUT).map(({ batch }) => batch);
const freshOf = (batch: Batch): LogLine[] => {
  const context = new Set(batch.context_logline_ids ?? []);
  return batch.data.filter((line) => !context.has(line.logline_id));
};
const costOf = (lines: readonly LogLine[]) => lines.reduce((sum, line) => sum + lineCost(line), 0);

function assertWithinBound(outputs: readonly StageOutput[]) {
  for (const output of sentTo(outputs)) {
    const bytes = Buffer.byteLength(output.value as string);
    assert.ok(bytes <= BOUND, `a batch of ${bytes} bytes exceeds max_batch_bytes ${BOUND}`);
  }
}

/** Each batch's id is derived from the source positions of its own lines, and nothing else. */
function assertIdsFromPositions(sent: readonly Batch[]) {
  for (const batch of sent)
    assert.equal(batch.batch_id, stableId('batch', ...freshOf(batch).map((l) => l.logline_id)));
}

test('no batch exceeds max_batch_bytes with its context, the context travels whole, every line once and in order', () => {
  const { run, timer } = setup(BOUND);
  const outputs: StageOutput[] = [];
  const subnetA: number[] = [];
  const values: string[] = [];
  for (let offset = 0; offset < 500; offset += 1) {
    const other = offset % 5 === 4;
    values.push(bigLine(offset, other ? '10.9.1.1' : '10.2.54.7'));
    if (!other) subnetA.push(offset);
  }
  for (let from = 0; from < values.length; from += 37)
    outputs.push(...run(values.slice(from, from + 37), from));
  outputs.push(...timer(START + 31_000));

  assertWithinBound(outputs);
  const sent = batches(outputs).filter((b) => b.data[0]!.subnet_id === '10.2.54.0_24');
  assert.ok(
    sent.length > 5,
    `the bound, not batch_size 2000, cut ${subnetA.length} lines (${sent.length} batches)`,
  );
  assert.deepEqual(
    sent.flatMap((b) => freshOf(b).map((l) => l.logline_id)),
    subnetA.map(idAt),
    'each line in exactly one batch, in arrival order',
  );
  const budget = lineBudget({ maxBatchBytes: BOUND });
  for (let i = 1; i < sent.length; i += 1) {
    const previous = freshOf(sent[i - 1]!);
    assert.deepEqual(
      sent[i]!.context_logline_ids,
      previous.map((l) => l.logline_id),
      'the previous batch whole',
    );
    // A batch left because its subnet's next line would have pushed it over the bound, not earlier.
    assert.ok(costOf(previous) + lineCost(freshOf(sent[i]!)[0]!) > budget);
  }
  assertIdsFromPositions(sent);
});

test('batch ids derive from source positions alone: the same lines in other call sizes make the same batches', () => {
  const values = Array.from({ length: 200 }, (_, i) => bigLine(i));
  const whole = setup(BOUND);
  const once = [...whole.run(values, 0), ...whole.timer(START + 31_000)];
  const single = setup(BOUND);
  const oneByOne = [...values.flatMap((value, i) => single.run([value], i)), ...single.timer(START + 31_000)];
  const shape = (outputs: readonly StageOutput[]) =>
    batches(outputs).map((b) => [b.batch_id, b.data.map((l) => l.logline_id)]);
  assert.ok(batches(once).length > 3);
  assert.deepEqual(shape(oneByOne), shape(once));
  assertIdsFromPositions(batches(once));
});

/**
 * A store as the collector wrote it before batches had a byte bound: open batch without `bytes`,
 * context as a plain array of LogLine objects, open lines as arrays of `{ line, source }`. Made here
 * under a 990,000-byte bound and rewritten in those forms: an open batch of 220 lines (about 220 KB)
 * and a previous batch of about 480 lines.
 */
function storeWithoutBound(): { state: MemoryState; context: string[]; open: number[] } {
  const old = setup(990_000);
  const sent = batches(
    old.run(
      Array.from({ length: 700 }, (_, i) => bigLine(i)),
      0,
    ),
  );
  assert.equal(sent.length, 1);
  const context = freshOf(sent[0]!).map((l) => l.logline_id);
  const store = old.store();
  const { bytes: _bytes, ...open } = store.get('o/10.2.54.0_24') as Record<string, unknown>;
  store.put('o/10.2.54.0_24', open);
  const { lines: contextLines } = store.get('c/10.2.54.0_24') as ContextEntry;
  store.put(
    'c/10.2.54.0_24',
    contextLines.map((line) => JSON.parse(line.json) as LogLine),
  );
  for (const [key, value] of [...store.range({ from: 'l/', to: 'm' })])
    store.put(
      key,
      (value as LinesEntry).lines.map(({ json, source }) => ({ line: JSON.parse(json) as LogLine, source })),
    );
  const first = context.length;
  return { state: old.state, context, open: Array.from({ length: 700 - first }, (_, i) => first + i) };
}

for (const [when, at] of [
  ['before its timeout', START + 1_000],
  ['at its timeout', START + 31_000],
] as const)
  test(`an oversized open batch stored without the bound leaves in parts within it at the next timer call, ${when}`, () => {
    const { state, context, open } = storeWithoutBound();
    assert.ok(open.length * 1000 > 3 * BOUND, 'the stored batch is several times the bound');
    const { timer, store } = setup(BOUND, state);
    const outputs = timer(at);

    assertWithinBound(outputs);
    const parts = batches(outputs);
    assert.ok(parts.length > 3);
    assert.deepEqual(
      parts.flatMap((b) => freshOf(b).map((l) => l.logline_id)),
      open.map(idAt),
    );
    assertIdsFromPositions(parts);
    // The stored context, too large for the first part's room, is cut oldest first and only as needed.
    const kept = parts[0]!.context_logline_ids ?? [];
    assert.ok(kept.length > 0 && kept.length < context.length);
    assert.deepEqual(kept, context.slice(context.length - kept.length));
    const keptLines = parts[0]!.data.filter((l) => kept.includes(l.logline_id));
    const room = BOUND - BATCH_ENVELOPE_BYTES - costOf(freshOf(parts[0]!));
    assert.ok(costOf(keptLines) + lineCost(keptLines[0]!) > room, 'one more older line would not fit');
    for (let i = 1; i < parts.length; i += 1)
      assert.deepEqual(
        parts[i]!.context_logline_ids,
        freshOf(parts[i - 1]!).map((l) => l.logline_id),
      );
    assert.deepEqual(
      [...store().range({ from: 'l/', to: 'p' })].map(([key]) => key),
      [],
      'no open batch or lines remain',
    );
    assert.deepEqual(
      timer(at + 40_000).filter((o) => o.topic === OUTPUT),
      [],
      'and nothing leaves twice',
    );
  });

test('a line arriving on an oversized stored batch sends it in parts first, and then joins the next batch', () => {
  const { state, open } = storeWithoutBound();
  const { run, timer } = setup(BOUND, state);
  const outputs = run([bigLine(900)], 700);
  assertWithinBound(outputs);
  assert.deepEqual(
    batches(outputs).flatMap((b) => freshOf(b).map((l) => l.logline_id)),
    open.map(idAt),
  );
  const later = batches(timer(START + 31_000));
  assert.deepEqual(
    later.map((b) => freshOf(b).map((l) => l.logline_id)),
    [[idAt(700)]],
  );
});

test('a line too large for half a batch is a failed line with its reason, and the stage goes on', () => {
  const { run, timer } = setup(BOUND, undefined, 65_536);
  const outputs = run([bigLine(1, '10.2.54.7', 40_000), bigLine(2)], 0);
  const failed = monitoringRows(outputs, 'failed_loglines');
  assert.equal(failed.length, 1);
  assert.match(
    String(failed[0]?.reason_for_failure),
    /^line takes \d+ bytes in a batch, more than half of max_batch_bytes allows \(32512\)$/,
  );
  assert.equal(failed[0]?.src_offset, 0);
  assert.deepEqual(
    batches(timer(START + 31_000)).map((b) => b.data.map((l) => l.logline_id)),
    [[idAt(1)]],
  );
});
