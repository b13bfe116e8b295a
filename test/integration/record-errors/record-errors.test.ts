import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { TransactionalWorker } from '../../../src/runtime/index.ts';
import { fixedBackOff } from '../../../src/runtime/backoff.ts';
import { DLT_HEADERS } from '../../../src/runtime/record-errors/dead-letter.ts';
import { InMemoryAttemptStore } from '../../../src/runtime/delivery-attempts/in-memory-attempt-store.ts';
import type { RecordErrorPolicy } from '../../../src/runtime/record-errors/policy.ts';
import { DecodeError, type Stage, type StageRecord } from '../../../src/runtime/stage.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import {
  checkExactlyOnce,
  createTopics,
  readCommitted,
  seed,
  testKafkaOptions,
} from '../../support/pipeline-harness.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

const seq = (r: Pick<StageRecord, 'value'>) => Number(r.value?.toString());

/** Pass-through that lets `decide` fail chosen records (by sequence number). */
function failingStage(
  input: string,
  output: string,
  group: string,
  decide: (n: number, r: StageRecord) => Error | undefined | Promise<Error | undefined>,
  opts: { attribute?: boolean } = {},
): Stage {
  return {
    name: group,
    inputTopics: [input],
    outputTopics: [output],
    async process(records) {
      const outputs = [];
      const failures = [];
      for (const r of records) {
        const err = await decide(seq(r), r);
        if (err) failures.push({ record: r, error: err });
        else
          outputs.push({
            topic: output,
            key: r.key,
            value: r.value,
            ...(opts.attribute === false ? {} : { source: r }),
          });
      }
      return { outputs, failures };
    },
  };
}

async function setup(name: string, n: number, partitions = 3) {
  const input = uniqueTopic(`${name}-in`);
  const output = uniqueTopic(`${name}-out`);
  const group = uniqueGroup(name);
  await createTopics(bootstrap, [input, output, `${input}.DLT`], partitions);
  await seed(bootstrap, input, 0, n);
  return { input, output, group };
}

function start(
  stage: Stage,
  over: Partial<RecordErrorPolicy> = {},
  kafka: Parameters<typeof testKafkaOptions>[1] = {},
  extra: Partial<ConstructorParameters<typeof TransactionalWorker>[0]> = {},
) {
  const w = new TransactionalWorker({
    stage,
    instanceId: '0',
    mode: 'exactly-once',
    kafka: testKafkaOptions(bootstrap, kafka),
    batch: { size: 50, timeoutMs: 50 },
    log: silentLogger(),
    recordErrors: { backOff: fixedBackOff(200, 3), ...over },
    ...extra,
  });
  return w;
}

async function expectOutputs(output: string, expected: number[], timeoutMs = 90_000) {
  const records = await readCommitted(bootstrap, output, expected.length, timeoutMs);
  const got = records.map(seq).sort((a, b) => a - b);
  assert.deepEqual(
    got,
    [...expected].sort((a, b) => a - b),
    'each expected record output exactly once',
  );
  return records;
}

describe('record error handling (real broker)', () => {
  test('a record that always fails lands in the DLT once with every header; the others are output exactly once', async () => {
    const { input, output, group } = await setup('dlt', 300);
    const w = start(failingStage(input, output, group, (n) => (n === 42 ? new Error('boom 42') : undefined)));
    await w.start();
    try {
      await expectOutputs(
        output,
        [...Array(300).keys()].filter((n) => n !== 42),
      );
      const dlt = await readCommitted(bootstrap, `${input}.DLT`, 1, 30_000);
      assert.equal(dlt.length, 1);
      const h = dlt[0]!.headers;
      assert.equal(h[DLT_HEADERS.topic]?.toString(), input);
      for (const name of Object.values(DLT_HEADERS)) assert.ok(name in h, `header ${name}`);
      assert.equal(h[DLT_HEADERS.attempts]?.toString(), '4');
      assert.equal(h[DLT_HEADERS.errorMessage]?.toString(), 'boom 42');
      assert.equal(h[DLT_HEADERS.group]?.toString(), group);
      assert.equal(dlt[0]!.value?.toString(), '42');
      const retries = (await w.metrics.retries.get()).values.reduce((s, v) => s + v.value, 0);
      assert.equal(retries, 3);
    } finally {
      await w.stop();
    }
  });

  test('a record that fails k < max attempts times and then succeeds is output once', async () => {
    const { input, output, group } = await setup('flaky', 200);
    let failures = 0;
    const w = start(
      failingStage(
        input,
        output,
        group,
        (n) => (n === 7 && failures++ < 2 ? new Error('flaky') : undefined),
        {
          attribute: false,
        },
      ),
    );
    await w.start();
    try {
      await expectOutputs(output, [...Array(200).keys()]);
      assert.equal(failures, 3);
    } finally {
      await w.stop();
    }
  });

  test('a record that cannot be decoded is dead-lettered at once, never retried', async () => {
    const { input, output, group } = await setup('decode', 100);
    let calls = 0;
    const w = start(
      failingStage(input, output, group, (n) =>
        n === 5 ? (calls++, new DecodeError('not JSON')) : undefined,
      ),
    );
    await w.start();
    try {
      await expectOutputs(
        output,
        [...Array(100).keys()].filter((n) => n !== 5),
      );
      const dlt = await readCommitted(bootstrap, `${input}.DLT`, 1, 30_000);
      assert.equal(dlt[0]!.headers[DLT_HEADERS.errorKind]?.toString(), 'decode');
      assert.equal(calls, 1);
    } finally {
      await w.stop();
    }
  });

  test('a batch that throws is bisected down to the poison record; only it is dead-lettered', async () => {
    const { input, output, group } = await setup('bisect', 200);
    const stage: Stage = {
      name: group,
      inputTopics: [input],
      outputTopics: [output],
      process(records) {
        if (records.some((r) => seq(r) === 99)) throw new TypeError('batch poisoned by 99');
        return { outputs: records.map((r) => ({ topic: output, key: r.key, value: r.value })) };
      },
    };
    const w = start(stage, { backOff: fixedBackOff(100, 1) });
    await w.start();
    try {
      await expectOutputs(
        output,
        [...Array(200).keys()].filter((n) => n !== 99),
      );
      const dlt = await readCommitted(bootstrap, `${input}.DLT`, 1, 30_000);
      assert.equal(dlt.length, 1);
      assert.equal(dlt[0]!.headers[DLT_HEADERS.errorClass]?.toString(), 'TypeError');
      assert.ok(((await w.metrics.bisections.get()).values[0]?.value ?? 0) > 0);
    } finally {
      await w.stop();
    }
  });

  test('a back-off longer than max.poll.interval keeps the member in the group, and other partitions flow', async () => {
    const { input, output, group } = await setup('longbackoff', 300);
    const failedAt: number[] = [];
    let firstFailure: number | undefined;
    const w = start(
      failingStage(input, output, group, (n, r) => {
        if (n !== 3) return undefined;
        failedAt.push(Date.now());
        firstFailure ??= r.partition;
        return failedAt.length === 1 ? new Error('wait for me') : undefined;
      }),
      { backOff: fixedBackOff(12_000, 1) },
      { maxPollIntervalMs: 8_000, sessionTimeoutMs: 6_000 },
    );
    await w.start();
    const admin = createAdmin(bootstrap);
    try {
      // Everything but record 3's partition tail is out long before the back-off ends.
      await waitFor(async () => (await readCommitted(bootstrap, output, 150, 5_000)).length >= 150, {
        timeoutMs: 30_000,
        message: 'other partitions flow during the back-off',
      });
      assert.equal(failedAt.length, 1, 'still backing off');
      const group1 = await admin.describeGroup(group);
      assert.equal(group1.members.length, 1);
      await expectOutputs(output, [...Array(300).keys()]);
      assert.ok(failedAt[1]! - failedAt[0]! >= 11_000, 'retried after the back-off');
      const group2 = await admin.describeGroup(group);
      assert.equal(group2.state, 'Stable');
      assert.equal(group2.members[0]?.memberId, group1.members[0]?.memberId, 'same member, never rebalanced');
      const assigns = (await w.metrics.epochChanges.get()).values.find(
        (v) => v.labels.cause === 'assign',
      )?.value;
      assert.equal(assigns, 1);
      assert.equal((await w.metrics.maxPollExceeded.get()).values[0]?.value ?? 0, 0);
    } finally {
      admin.close();
      await w.stop();
    }
  });

  test('a record whose processing never completes is isolated and dead-lettered after N deliveries; the partition flows on', async () => {
    const { input, output, group } = await setup('timeout', 150, 1);
    const w = start(
      {
        name: group,
        inputTopics: [input],
        outputTopics: [output],
        async process(records) {
          if (records.some((r) => seq(r) === 60)) await new Promise(() => undefined);
          return { outputs: records.map((r) => ({ topic: output, key: r.key, value: r.value })) };
        },
      },
      { processingTimeoutMs: 1_000, maxDeliveries: 2 },
      {},
      { attemptStore: new InMemoryAttemptStore() },
    );
    await w.start();
    try {
      const records = await readCommitted(bootstrap, output, 149, 120_000);
      const report = checkExactlyOnce(records, 150);
      assert.equal(report.duplicates, 0);
      assert.equal(report.lost, 1);
      assert.ok(!records.some((r) => seq(r) === 60));
      const dlt = await readCommitted(bootstrap, `${input}.DLT`, 1, 30_000);
      assert.equal(dlt[0]!.value?.toString(), '60');
      assert.equal(dlt[0]!.headers[DLT_HEADERS.errorKind]?.toString(), 'redelivery-exhausted');
      assert.ok(((await w.metrics.processingTimeouts.get()).values[0]?.value ?? 0) >= 2);
    } finally {
      await w.stop();
    }
  });

  test('the dead-letter limit stops the worker and turns readiness red instead of emptying the topic', async () => {
    const { input, output, group } = await setup('dltlimit', 500);
    const w = start(
      failingStage(input, output, group, () => new DecodeError('all bad')),
      {
        deadLetterLimit: { maxShare: 0.5, window: 100, maxConsecutive: 60 },
      },
    );
    await w.start();
    try {
      await waitFor(() => w.status().state === 'failed', { timeoutMs: 60_000, message: 'worker stops' });
      const status = w.status();
      assert.equal(status.ready, false);
      assert.equal(status.live, false);
      assert.match(status.failure ?? '', /dead-letter limit/);
      const dlt = await readCommitted(bootstrap, `${input}.DLT`, 500, 5_000);
      assert.ok(dlt.length < 100, `only the batches before the limit were dead-lettered (${dlt.length})`);
    } finally {
      await w.stop();
    }
  });
});
