import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProcessResult, StageOutput } from '../../../src/runtime/index.ts';
import { encodeBatch } from '../../../src/stages/messages.ts';
import { createPrefilterStage } from '../../../src/stages/prefilter/prefilter-stage.ts';
import { record, stageContext } from '../../support/stage-context.ts';
import { batch, line } from './batches.ts';
import { batchesSent, monitoringRows } from './outputs.ts';
import { shippedConfig } from './fixtures.ts';

const INPUT = 'pipeline-batch_sender_to_prefilter-dga_prefilter';
const OUTPUT = 'pipeline-prefilter_to_inspector-dga_inspector';

function run(
  method: 'check_dga_relevance' | 'check_tunnel_relevance' | 'no_relevance_check',
  values: (string | null)[],
) {
  const config = shippedConfig();
  const prefilters = config.pipeline.log_filtering.map((p) => ({ ...p, relevance_method: method }));
  const stage = createPrefilterStage({
    config: { ...config, pipeline: { ...config.pipeline, log_filtering: prefilters } },
    prefilterName: 'dga_prefilter',
  });
  assert.deepEqual(stage.inputTopics, [INPUT]);
  const records = values.map((value, offset) => record(INPUT, 0, offset, value, '10.2.54.0_24'));
  return stage.process(records, stageContext()) as ProcessResult;
}

const sent = (outputs: readonly StageOutput[]) => batchesSent(outputs, OUTPUT);

const noerror = { status_code: 'NOERROR' };

test('check_dga_relevance keeps only lines whose ListItem values are relevant and records the others', () => {
  const input = batch([line('a', 1), line('b', 2, noerror), line('c', 3)]);
  const result = run('check_dga_relevance', [encodeBatch(input)]);
  const [out, ...more] = sent(result.outputs);
  assert.equal(more.length, 0);
  assert.equal(out?.key, '10.2.54.0_24');
  assert.deepEqual(
    out?.batch.data.map((l) => l.logline_id),
    ['a', 'c'],
  );
  assert.equal(out?.batch.batch_id, 'batch-1');
  assert.notEqual(out?.batch.batch_tree_row_id, 'row-1');
  assert.equal(out?.batch.end_timestamp, line('c', 3).ts);
  const filtered = monitoringRows(result.outputs, 'logline_timestamps');
  assert.deepEqual(
    filtered.map((r) => [r.logline_id, r.status, r.is_active]),
    [['b', 'filtered_out', 0]],
  );
  assert.deepEqual(
    monitoringRows(result.outputs, 'batch_tree').map((r) => [r.status, r.parent_batch_row_id]),
    [['finished', 'row-1']],
  );
});

test('check_tunnel_relevance keeps the names the Domainator can window, whatever their answer', () => {
  const named = (id: string, i: number, domain_name: string, extra = {}) =>
    line(id, i, { domain_name, ...extra });
  const input = batch([
    named('tunnel', 1, 'mzxw6ytboi.0.t.example.org', noerror),
    named('sub', 2, 'www.example.com'),
    named('bare', 3, 'example.com', noerror),
    named('single', 4, 'printer'),
    named('reverse', 5, '4.3.2.1.in-addr.arpa'),
    named('blocklist', 6, '4.3.2.1.zen.spamhaus.org'),
    named('provider', 7, 'abc123.execute-api.eu-west-1.amazonaws.com', noerror),
    named('internal', 8, 'db.prod.internal'),
  ]);
  const result = run('check_tunnel_relevance', [encodeBatch(input)]);
  assert.deepEqual(
    sent(result.outputs)[0]?.batch.data.map((l) => l.logline_id),
    ['tunnel', 'sub'],
  );
  assert.deepEqual(
    monitoringRows(result.outputs, 'logline_timestamps').map((r) => [r.logline_id, r.status]),
    ['bare', 'single', 'reverse', 'blocklist', 'provider', 'internal'].map((id) => [id, 'filtered_out']),
  );
});

test('no_relevance_check keeps every line', () => {
  const input = batch([line('a', 1), line('b', 2, noerror)]);
  const [out] = sent(run('no_relevance_check', [encodeBatch(input)]).outputs);
  assert.deepEqual(
    out?.batch.data.map((l) => l.logline_id),
    ['a', 'b'],
  );
});

test('a batch left with nothing, or with context lines only, is not sent and is recorded as filtered_out', () => {
  const empty = batch([line('a', 1, noerror)]);
  const contextOnly = batch([line('old', 1), line('new', 2, noerror)], ['old']);
  const result = run('check_dga_relevance', [encodeBatch(empty), encodeBatch(contextOnly)]);
  assert.equal(sent(result.outputs).length, 0);
  const finals = monitoringRows(result.outputs, 'batch_timestamps').filter((r) => r.status !== 'in_process');
  assert.deepEqual(
    finals.map((r) => [r.status, r.message_count]),
    [
      ['filtered_out', 0],
      ['filtered_out', 1],
    ],
  );
  // Context lines were recorded by the batch that first carried them; only `new` is filtered here.
  assert.deepEqual(
    monitoringRows(result.outputs, 'logline_timestamps').map((r) => r.logline_id),
    ['a', 'new'],
  );
});

test('context ids are kept for the context lines that stay', () => {
  const input = batch([line('old1', 1), line('old2', 2, noerror), line('new', 3)], ['old1', 'old2']);
  const [out] = sent(run('check_dga_relevance', [encodeBatch(input)]).outputs);
  assert.deepEqual(out?.batch.context_logline_ids, ['old1']);
});

test('a record that is not a Batch fails alone as a decode error; the others go on', () => {
  const result = run('no_relevance_check', ['not json', encodeBatch(batch([line('a', 1)])), null]);
  assert.deepEqual(
    result.failures?.map((f) => [f.record.offset, (f.error as Error).name]),
    [
      [0, 'DecodeError'],
      [2, 'DecodeError'],
    ],
  );
  assert.equal(sent(result.outputs).length, 1);
  assert.ok(
    result.outputs.filter((o) => !o.topic.startsWith('clickhouse_')).every((o) => o.source?.offset === 1),
  );
  assert.ok(monitoringRows(result.outputs, 'batch_timestamps').every((r) => r.src_offset === 1));
});
