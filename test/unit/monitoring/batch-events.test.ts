import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { silentLogger } from '../../../src/observability/logger.ts';
import { BatchEventEmitter } from '../../../src/monitoring/batch-event-emitter.ts';
import { batchPartitions, withBatchEvents } from '../../../src/monitoring/batch-events.ts';
import {
  RecordError,
  type Stage,
  type StageContext,
  type StageOutput,
  type StageRecord,
} from '../../../src/runtime/stage.ts';

const rec = (topic: string, partition: number, offset: number): StageRecord => ({
  topic,
  partition,
  offset,
  key: null,
  value: Buffer.from(String(offset)),
  headers: {},
  timestamp: undefined,
});

function ctx(epoch = 3): { ctx: StageContext; controller: AbortController } {
  const controller = new AbortController();
  const state = (): never => {
    throw new Error('no stores');
  };
  return { ctx: { signal: controller.signal, log: silentLogger(), epoch, state }, controller };
}

const pass: Stage = {
  name: 'test.pass',
  shortName: 'pass',
  inputTopics: ['in'],
  outputTopics: ['out'],
  process: (records) => ({ outputs: records.map((r) => ({ topic: 'out', value: r.value })) }),
};

const rowsOf = (outputs: StageOutput[]) =>
  outputs
    .filter((o) => o.topic === 'p_worker_batches')
    .map((o) => JSON.parse(String(o.value)) as Record<string, unknown>);

describe('withBatchEvents', () => {
  test('appends one committed row per input partition with a stable identity', async () => {
    const stage = withBatchEvents(pass, {
      instanceId: 'i1',
      topicPrefix: 'p_',
      now: () => 1_700_000_000_000,
    });
    assert.deepEqual(stage.outputTopics, ['out', 'p_worker_batches']);
    assert.equal(stage.shortName, 'pass');
    const records = [rec('in', 0, 10), rec('in', 1, 5), rec('in', 0, 11), rec('in', 0, 13)];
    const result = await stage.process(records, ctx().ctx);
    assert.equal(result.outputs.length, 4 + 2);
    const rows = rowsOf(result.outputs);
    assert.deepEqual(
      rows.map((r) => [
        r.src_topic,
        r.src_partition,
        r.src_offset,
        r.row_index,
        r.first_offset,
        r.last_offset,
        r.records,
      ]),
      [
        ['in', 0, 10, 0, 10, 13, 3],
        ['in', 1, 5, 0, 5, 5, 1],
      ],
    );
    assert.equal(rows[0]!.event, 'committed');
    assert.equal(rows[0]!.batch_records, 4);
    assert.equal(rows[0]!.batch_partitions, 2);
    assert.equal(rows[0]!.outputs, 4);
    assert.equal(rows[0]!.epoch, 3);
    assert.equal(rows[0]!.stage, 'test.pass');
    assert.equal(rows[0]!.consumer_group, 'test.pass');
    // Without failures the rows name their source, so settlement can attribute them.
    assert.deepEqual(result.outputs[4]!.source, { topic: 'in', partition: 0, offset: 10 });
    // The same batch again (a replay) yields identical rows.
    const again = await stage.process(records, ctx().ctx);
    assert.deepEqual(rowsOf(again.outputs), rows);
  });

  test('rows carry no source when the stage reports failures (forcing a re-run of the kept records)', async () => {
    const failing: Stage = {
      ...pass,
      process: (records) => ({
        outputs: [],
        failures: [{ record: records[0]!, error: new RecordError(records[0]!, 'x') }],
      }),
    };
    const result = await withBatchEvents(failing, { instanceId: 'i', topicPrefix: 'p_' }).process(
      [rec('in', 0, 1), rec('in', 0, 2)],
      ctx().ctx,
    );
    assert.equal(result.outputs.length, 1);
    assert.equal(result.outputs[0]!.source, undefined);
    assert.equal(rowsOf(result.outputs)[0]!.dead_letters, 1);
  });

  test('batchPartitions', () => {
    assert.deepEqual(batchPartitions([rec('a', 1, 7), rec('a', 1, 9)]), [
      { topic: 'a', partition: 1, firstOffset: 7, lastOffset: 9, records: 2 },
    ]);
  });
});

describe('BatchEventEmitter', () => {
  const setup = (consumed = false) => {
    const sent: StageOutput[] = [];
    const emitter = new BatchEventEmitter({
      stage: 'test.pass',
      instanceId: 'i1',
      topicPrefix: 'p_',
      log: silentLogger(),
      incarnation: 42,
      consumed,
      sink: (o) => {
        sent.push(o);
        return Promise.resolve();
      },
    });
    const stage = withBatchEvents(pass, { instanceId: 'i1', topicPrefix: 'p_', emitter });
    return { sent, emitter, stage, rows: () => rowsOf(sent) };
  };

  test('a processed batch without a commit before the next call is reported aborted, once', async () => {
    const { emitter, stage, rows } = setup();
    const batch = [rec('in', 0, 0), rec('in', 0, 1)];
    await stage.process(batch, ctx().ctx);
    emitter.committed({ epoch: 1, records: 2, outputs: 3, deadLetters: 0 });
    await stage.process([rec('in', 0, 2)], ctx().ctx);
    assert.equal(rows().length, 0, 'nothing while the batch may still commit');
    await stage.process([rec('in', 0, 2)], ctx().ctx); // the previous one never committed
    assert.deepEqual(
      rows().map((r) => [r.event, r.src_topic, r.src_partition, r.src_offset, r.row_index, r.first_offset]),
      [['aborted', '__worker.test.pass.i1', 42, 0, 2, 2]],
    );
    await emitter.stop();
    assert.equal(rows().length, 2, 'the last uncommitted batch is reported at stop');
    assert.equal(rows()[1]!.src_offset, 1, 'each emission has its own sequence number');
  });

  test('a batch whose signal fires with a stale reason is reported stale, not aborted', async () => {
    const { emitter, stage, rows } = setup(true);
    const { ctx: c, controller } = ctx();
    const slow = Promise.resolve(stage.process([rec('in', 1, 4)], c));
    controller.abort(new Error('assignment changed (revoked) while the batch was processed'));
    await slow;
    await emitter.stop();
    assert.deepEqual(
      rows().map((r) => [r.event, r.row_index, r.reason]),
      [
        ['consumed', 1, null],
        ['stale', 4, 'assignment changed (revoked) while the batch was processed'],
      ],
    );
  });

  test('a recovery row names the error, the planned action with its steps, and why a stop stopped', async () => {
    const { emitter, rows } = setup();
    const hooks = emitter.hooks;
    hooks.onRecovery?.({
      kind: 'other',
      code: '_STATE',
      operation: 'abort-transaction',
      action: 'recreate-producer',
      epoch: 3,
      steps: ['close-producer', 'start-producer'],
      situation: 'abort',
    });
    hooks.onRecovery?.({
      kind: 'authorization',
      code: 'TOPIC_AUTHORIZATION_FAILED',
      operation: 'produce',
      action: 'stop',
      epoch: 3,
      steps: [],
      reason: 'not authorized: TOPIC_AUTHORIZATION_FAILED',
    });
    await emitter.stop();
    assert.deepEqual(
      rows().map((r) => [r.event, r.reason]),
      [
        [
          'recovered',
          'other _STATE on abort-transaction after abort: recreate-producer [close-producer, start-producer]',
        ],
        [
          'recovered',
          'authorization TOPIC_AUTHORIZATION_FAILED on produce: stop: not authorized: TOPIC_AUTHORIZATION_FAILED',
        ],
      ],
    );
  });

  test("the runtime's re-run of the kept records after failures is not an abort", async () => {
    const { emitter, rows } = setup();
    let calls = 0;
    const stage = withBatchEvents(
      {
        ...pass,
        process: (records) => {
          calls += 1;
          return calls === 1
            ? { outputs: [], failures: [{ record: records[1]!, error: new Error('x') }] }
            : { outputs: [] };
        },
      },
      { instanceId: 'i1', topicPrefix: 'p_', emitter },
    );
    await stage.process([rec('in', 0, 0), rec('in', 0, 1), rec('in', 0, 2)], ctx().ctx);
    await stage.process([rec('in', 0, 0)], ctx().ctx);
    emitter.committed({ epoch: 1, records: 1, outputs: 1, deadLetters: 0 });
    await emitter.stop();
    assert.equal(rows().length, 0);
  });

  test('the disjoint pieces of a bisected batch are one commit, not aborts', async () => {
    const { emitter, stage, rows } = setup();
    await stage.process([rec('in', 0, 0), rec('in', 0, 1)], ctx().ctx);
    await stage.process([rec('in', 0, 2), rec('in', 0, 3)], ctx().ctx);
    emitter.committed({ epoch: 1, records: 4, outputs: 6, deadLetters: 0 });
    await emitter.stop();
    assert.equal(rows().length, 0);
  });

  test('a batch discarded after processing, followed by a commit of another batch, is reported', async () => {
    const { emitter, stage, rows } = setup();
    await stage.process([rec('in', 0, 0), rec('in', 0, 1)], ctx().ctx); // discarded: its partition was revoked
    await stage.process([rec('in', 1, 7)], ctx().ctx);
    emitter.committed({ epoch: 2, records: 1, outputs: 2, deadLetters: 0 });
    await emitter.stop();
    assert.deepEqual(
      rows().map((r) => [r.event, r.partition, r.first_offset, r.records]),
      [['aborted', 0, 0, 2]],
    );
  });
});
