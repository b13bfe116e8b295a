import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deadLetterOf, DLT_HEADERS } from '../../../src/runtime/record-errors/dead-letter.ts';
import {
  REPLAYED_FROM_HEADER,
  replayOf,
  replayStage,
  UnreplayableRecord,
  type ReplayDecision,
} from '../../../src/app/dlt-replay.ts';
import type { StageRecord } from '../../../src/runtime/stage.ts';
import { silentLogger } from '../../../src/observability/logger.ts';

// Pure: no broker needed (the replay against a broker is test/integration/dlt/replay.test.ts).

const original: StageRecord = {
  topic: 'pipeline-in',
  partition: 2,
  offset: 41,
  key: Buffer.from('k'),
  value: Buffer.from('v'),
  headers: { trace: Buffer.from('abc') },
  timestamp: 1_700_000_000_000,
};

function dlqRecord(offset: number): StageRecord {
  const dl = deadLetterOf(original, 'pipeline-in.DLT', {
    group: 'g',
    stage: 's',
    errorKind: 'record',
    error: new Error('boom'),
    attempts: 2,
    firstFailure: 0,
    lastFailure: 0,
  });
  const headers = Object.fromEntries(
    Object.entries(dl.headers ?? {}).map(([k, v]) => [k, Buffer.isBuffer(v) ? v : Buffer.from(v)]),
  );
  return {
    topic: 'pipeline-in.DLT',
    partition: 0,
    offset,
    key: original.key,
    value: original.value,
    headers,
    timestamp: 1,
  };
}

describe('replayOf', () => {
  it('restores key, value and original headers, drops hamstring.dlt.*, adds replayed-from', () => {
    const out = replayOf(dlqRecord(7));
    assert.equal(out.topic, 'pipeline-in');
    assert.deepEqual(out.key, Buffer.from('k'));
    assert.deepEqual(out.value, Buffer.from('v'));
    assert.deepEqual(Object.keys(out.headers ?? {}).sort(), [REPLAYED_FROM_HEADER, 'trace']);
    assert.equal(out.headers?.[REPLAYED_FROM_HEADER], 'pipeline-in.DLT@0:7');
    assert.deepEqual(out.source, { topic: 'pipeline-in.DLT', partition: 0, offset: 7 });
  });

  it('sends to `to` when given, even without an origin header', () => {
    assert.equal(replayOf(dlqRecord(1), 'fixed').topic, 'fixed');
    assert.equal(replayOf({ ...dlqRecord(1), headers: {} }, 'fixed').topic, 'fixed');
  });

  it('throws a non-retryable UnreplayableRecord when there is no origin header', () => {
    const rec = { ...dlqRecord(1), headers: { trace: Buffer.from('x') } };
    assert.throws(
      () => replayOf(rec),
      (e: unknown) => e instanceof UnreplayableRecord && e.retryable === false,
    );
    assert.ok(!(DLT_HEADERS.topic in rec.headers));
  });
});

describe('replayStage', () => {
  it('routes to any topic and reports unreplayable records as failures', async () => {
    const decisions: ReplayDecision[] = [];
    const stage = replayStage('pipeline-in.DLT', { onDecision: (d) => decisions.push(d) });
    assert.equal(stage.outputTopics, 'any');
    assert.deepEqual(stage.inputTopics, ['pipeline-in.DLT']);
    assert.equal(stage.name, 'hamstring-dlt-replay.pipeline-in.DLT');
    const result = await stage.process([dlqRecord(0), { ...dlqRecord(1), headers: {} }], {
      signal: new AbortController().signal,
      log: silentLogger(),
      epoch: 1,
      state: () => {
        throw new Error('no stores');
      },
    });
    assert.equal(result.outputs.length, 1);
    assert.deepEqual(
      result.failures?.map((f) => f.record.offset),
      [1],
    );
    assert.deepEqual(
      decisions.map((d) => [d.offset, d.target]),
      [
        [0, 'pipeline-in'],
        [1, undefined],
      ],
    );
  });
});
