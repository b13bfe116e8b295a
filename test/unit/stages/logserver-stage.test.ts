import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { HamstringConfig } from '../../../src/config/index.ts';
import type { ProcessResult, StageOutput } from '../../../src/runtime/index.ts';
import { createLogserverStage } from '../../../src/stages/logserver/logserver-stage.ts';
import { LINES_HEADER } from '../../../src/stages/line-frames.ts';
import { MemoryState } from '../../support/memory-state.ts';
import { record, stageContext, timerContext } from '../../support/stage-context.ts';
import { linesSent, monitoringRows } from './outputs.ts';
import { dnsLine, shippedConfig } from './fixtures.ts';

const COLLECTOR_TOPIC = 'pipeline-logserver_to_collector-dga_collector';
const dir = mkdtempSync(join(tmpdir(), 'hamstring-logserver-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function withCollectors(extra: Record<string, unknown>[], inputFile?: string): HamstringConfig {
  const config = shippedConfig();
  const base = config.pipeline.log_collection.collectors[0]!;
  return {
    ...config,
    pipeline: {
      ...config.pipeline,
      log_storage: { logserver: { ...config.pipeline.log_storage.logserver, input_file: inputFile } },
      log_collection: {
        ...config.pipeline.log_collection,
        collectors: [base, ...extra.map((entry) => ({ ...base, ...entry }))],
      },
    },
  };
}

const forwarded = (outputs: readonly StageOutput[]) =>
  linesSent(outputs).map(({ topic, key, line }) => [topic, key, line] as [string, string | null, string]);

test('a line goes unchanged to every collector of its protocol, keyed by its subnet under each prefix', () => {
  const config = withCollectors([
    { name: 'wide', batch_handler_config_override: { subnet_id: { ipv4_prefix_length: 16 } } },
    { name: 'other', protocol_base: 'http' },
  ]);
  const stage = createLogserverStage({ config });
  assert.deepEqual(stage.inputTopics, ['hamstring_input-dns', 'hamstring_input-http']);
  const line = dnsLine();
  const result = stage.process([record('hamstring_input-dns', 0, 5, line)], stageContext()) as ProcessResult;
  assert.deepEqual(forwarded(result.outputs), [
    [COLLECTOR_TOPIC, '10.2.54.0_24', line],
    ['pipeline-logserver_to_collector-wide', '10.2.0.0_16', line],
  ]);
  const pipeline = result.outputs.filter((o) => !o.topic.startsWith('clickhouse_'));
  assert.ok(pipeline.every((o) => o.source?.offset === 5));
  const rows = result.outputs.filter((o) => o.topic.startsWith('clickhouse_')).map((o) => o.topic);
  assert.deepEqual(rows, ['clickhouse_server_logs', 'clickhouse_server_logs_timestamps']);
  for (const table of ['server_logs', 'server_logs_timestamps'])
    assert.deepEqual(
      monitoringRows(result.outputs, table).map((r) => [r.src_offset, r.row_index]),
      [[5, 0]],
    );
});

test('a line whose address does not parse goes on unkeyed', () => {
  const stage = createLogserverStage({ config: withCollectors([]) });
  for (const line of [dnsLine({ src_ip: 'nope' }), 'not json', `${'['.repeat(100)}`]) {
    const result = stage.process(
      [record('hamstring_input-dns', 0, 1, line)],
      stageContext(),
    ) as ProcessResult;
    assert.deepEqual(forwarded(result.outputs), [[COLLECTOR_TOPIC, null, line]]);
  }
});

test('without input_file the stage has no store and no timer', () => {
  const stage = createLogserverStage({ config: withCollectors([]) });
  assert.equal(stage.timer, undefined);
  assert.equal(stage.stores, undefined);
});

test('the input file is tailed from partition 0: appended lines once, a replay reads the same bytes', async () => {
  const path = join(dir, 'tail.log');
  writeFileSync(path, `${dnsLine({ src_ip: '10.0.0.1' })}\n${dnsLine({ src_ip: '10.0.0.2' })}\npartial`);
  const stage = createLogserverStage({ config: withCollectors([], path) });
  const state = new MemoryState(['file_position']);
  assert.deepEqual((await stage.onTimer!(timerContext(state, 1, 0))).outputs, []);
  const snapshot = state.partition(0).snapshot();
  const first = forwarded((await stage.onTimer!(timerContext(state, 0, 0))).outputs);
  assert.deepEqual(
    first.map(([, key]) => key),
    ['10.0.0.0_24', '10.0.0.0_24'],
  );
  // A replay of that call (its transaction aborted: position as before) reads the same two lines.
  const replayState = new MemoryState(['file_position']);
  assert.deepEqual(replayState.partition(0).snapshot(), snapshot);
  assert.deepEqual(forwarded((await stage.onTimer!(timerContext(replayState, 0, 0))).outputs), first);
  assert.deepEqual(forwarded((await stage.onTimer!(timerContext(state, 0, 0))).outputs), []);
  appendFileSync(path, `-done\n${dnsLine({ src_ip: '10.0.1.3' })}\n`);
  const next = forwarded((await stage.onTimer!(timerContext(state, 0, 0))).outputs);
  assert.deepEqual(
    next.map(([, , value]) => value.slice(0, 12)),
    ['partial-done', dnsLine().slice(0, 12)],
  );
});

test('a file rotated by rename: the rest of the old file, then the new one; a truncated file from its start', async () => {
  const path = join(dir, 'rotate.log');
  writeFileSync(path, 'a1\n');
  const stage = createLogserverStage({ config: withCollectors([], path) });
  const state = new MemoryState(['file_position']);
  const read = async () =>
    forwarded((await stage.onTimer!(timerContext(state, 0, 0))).outputs).map(([, , value]) => value);
  assert.deepEqual(await read(), ['a1']);
  appendFileSync(path, 'a2\n');
  renameSync(path, `${path}.1`);
  writeFileSync(path, 'b1\n');
  assert.deepEqual(await read(), ['a2']);
  assert.deepEqual(await read(), ['b1']);
  truncateSync(path, 0);
  appendFileSync(path, 'c\n');
  assert.deepEqual(await read(), ['c']);
});

test('a file renamed by time as Zeek and Suricata rotate it: its rest is found by its inode and read first', async () => {
  const path = join(dir, 'dns.log');
  writeFileSync(path, 'a1\n');
  const stage = createLogserverStage({ config: withCollectors([], path) });
  const state = new MemoryState(['file_position']);
  const read = async () =>
    forwarded((await stage.onTimer!(timerContext(state, 0, 0))).outputs).map(([, , value]) => value);
  assert.deepEqual(await read(), ['a1']);
  appendFileSync(path, 'a2\n');
  // An older rotation already holds `.1`: the identity, not the name, finds the file.
  writeFileSync(`${path}.1`, 'old\n');
  renameSync(path, join(dir, 'dns.2025-12-01-10-00-00.log'));
  assert.deepEqual(await read(), ['a2']);
  assert.deepEqual(await read(), []);
  writeFileSync(path, 'b1\n');
  assert.deepEqual(await read(), ['b1']);
});

test("a call's lines of one subnet share a frame per collector; a lone line stays a record of its own, named by its source", () => {
  const stage = createLogserverStage({ config: withCollectors([]) });
  const a = [1, 2, 3].map((i) => dnsLine({ src_ip: `10.0.0.${i}` }));
  const lone = dnsLine({ src_ip: '10.7.7.7' });
  const records = [...a, lone].map((line, i) => record('hamstring_input-dns', 0, 20 + i, line));
  const result = stage.process(records, stageContext()) as ProcessResult;
  const pipeline = result.outputs.filter((o) => o.topic.startsWith('pipeline-'));
  assert.deepEqual(
    pipeline.map((o) => [o.key, o.headers?.[LINES_HEADER], o.source?.offset]),
    [
      ['10.0.0.0_24', '3', undefined],
      ['10.7.7.0_24', undefined, 23],
    ],
  );
  assert.deepEqual(
    linesSent(result.outputs).map((l) => l.line),
    [...a, lone],
  );
  // Each line keeps its own monitoring rows, named by the record it was read from.
  assert.deepEqual(
    monitoringRows(result.outputs, 'server_logs').map((r) => r.src_offset),
    [20, 21, 22, 23],
  );
});
