import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FetchedRecord } from '../../../../src/kafka/records.ts';
import { classifyKafkaError } from '../../../../src/kafka/classify.ts';
import { code } from '../../../../src/kafka/error-codes.ts';
import { fixedBackOff } from '../../../../src/runtime/backoff.ts';
import { DLT_HEADERS } from '../../../../src/runtime/record-errors/dead-letter.ts';
import type { FailureHistory } from '../../../../src/runtime/record-errors/failure-tracker.ts';
import { defaultRecordErrorPolicy } from '../../../../src/runtime/record-errors/policy.ts';
import { RefusedOutputs } from '../../../../src/runtime/record-errors/refused-outputs.ts';
import {
  afterRefusal,
  decideSettlement,
  type SettlementInput,
  type SettlementPlan,
} from '../../../../src/runtime/record-errors/settlement-plan.ts';
import { DecodeError, NonRetryableError, type StageOutput } from '../../../../src/runtime/stage.ts';
import { fetchedRecord } from '../../../support/fetched-record.ts';

const rec = fetchedRecord;
const at = (r: { partition: number; offset: number }) => `${r.partition}@${r.offset}`;

const records = [rec(0, 0), rec(0, 1), rec(0, 2), rec(1, 0), rec(1, 1)];
const outputsOf = (rs: FetchedRecord[]): StageOutput[] =>
  rs.map((r) => ({ topic: 'o', value: r.value, source: r }));
const policy = { ...defaultRecordErrorPolicy, backOff: fixedBackOff(1_000, 2) };

function input(over: Partial<SettlementInput> = {}): SettlementInput {
  return {
    records,
    outputs: outputsOf(records),
    failures: [],
    poison: [],
    policy,
    history: () => undefined,
    deliveries: () => undefined,
    deadLetterLimit: () => undefined,
    stateful: false,
    group: 'g',
    stage: 's',
    now: 100,
    ...over,
  };
}

/** A plan as the few facts a case asserts. */
function summary(plan: SettlementPlan) {
  if (plan.action === 'stop') return { action: 'stop', reason: plan.reason };
  return {
    action: 'commit',
    keep: plan.keep.map(at),
    outputs: plan.outputs?.map((o) => (o.source ? at(o.source) : 'no-source')),
    rerun: plan.rerun?.map(at),
    deadLetters: plan.deadLetters.map((d) => `${at(d.record)} ${d.kind} x${d.history.attempts}`),
    retries: plan.retries.map(
      (r) =>
        `${at({ partition: r.partition.partition, offset: r.offset })} in ${r.delayMs} attempt ${r.attempt}`,
    ),
    forwards: plan.forwards.map((f) => f.topic),
    failed: plan.failed.map((f) => `${at(f.position)} x${f.history.attempts}`),
    outcomes: plan.outcomes,
  };
}

const fail = (r: FetchedRecord, error: unknown = new Error('x')) => ({ record: r, error });
const without = (...gone: FetchedRecord[]) =>
  outputsOf(records.filter((r) => !gone.some((g) => at(g) === at(r))));
const seen = (attempts: number, firstFailure = 10): FailureHistory => ({
  attempts,
  firstFailure,
  lastFailure: firstFailure,
});

const cases: { name: string; input: SettlementInput; expect: Partial<ReturnType<typeof summary>> }[] = [
  {
    name: 'a clean batch commits every record and output',
    input: input(),
    expect: {
      action: 'commit',
      keep: ['0@0', '0@1', '0@2', '1@0', '1@1'],
      outputs: ['0@0', '0@1', '0@2', '1@0', '1@1'],
      rerun: undefined,
      deadLetters: [],
      retries: [],
      outcomes: [false, false, false, false, false],
    },
  },
  {
    name: 'a retryable failure holds back its record and the rest of its partition; other partitions commit',
    input: input({ outputs: without(rec(0, 1)), failures: [fail(rec(0, 1))] }),
    expect: {
      keep: ['0@0', '1@0', '1@1'],
      outputs: ['0@0', '1@0', '1@1'],
      retries: ['0@1 in 1000 attempt 1'],
      failed: ['0@1 x1'],
      deadLetters: [],
    },
  },
  {
    name: 'two failures in one partition: the partition is held at the earlier one',
    input: input({ outputs: without(rec(0, 1), rec(0, 2)), failures: [fail(rec(0, 2)), fail(rec(0, 1))] }),
    expect: { keep: ['0@0', '1@0', '1@1'], retries: ['0@1 in 1000 attempt 1'], failed: ['0@2 x1', '0@1 x1'] },
  },
  {
    name: 'outputs without a source cannot be picked apart: the rest is processed again',
    input: input({ outputs: [{ topic: 'o', value: 'x' }], failures: [fail(rec(1, 1))] }),
    expect: { keep: ['0@0', '0@1', '0@2', '1@0'], outputs: undefined, rerun: ['0@0', '0@1', '0@2', '1@0'] },
  },
  {
    name: 'a stateful stage after any failure is processed again on the records that commit',
    input: input({
      stateful: true,
      outputs: without(rec(0, 2)),
      failures: [fail(rec(0, 2), new DecodeError('bad'))],
    }),
    expect: {
      keep: ['0@0', '0@1', '0@2', '1@0', '1@1'],
      outputs: undefined,
      rerun: ['0@0', '0@1', '1@0', '1@1'],
      deadLetters: ['0@2 decode x1'],
    },
  },
  {
    name: 'after the last attempt a failure is dead-lettered with its history and its offset commits',
    input: input({ outputs: without(rec(0, 2)), failures: [fail(rec(0, 2))], history: () => seen(2) }),
    expect: {
      keep: ['0@0', '0@1', '0@2', '1@0', '1@1'],
      retries: [],
      failed: [],
      deadLetters: ['0@2 processing x3'],
      outcomes: [false, false, true, false, false],
    },
  },
  {
    name: 'non-retryable and decode errors are dead-lettered at once',
    input: input({
      outputs: without(rec(0, 0), rec(1, 0)),
      failures: [fail(rec(0, 0), new DecodeError('bad')), fail(rec(1, 0), new NonRetryableError('no'))],
    }),
    expect: { deadLetters: ['0@0 decode x1', '1@0 non-retryable x1'], retries: [] },
  },
  {
    name: "a stage's predicate can make any error non-retryable",
    input: input({ outputs: without(rec(1, 1)), failures: [fail(rec(1, 1))], stageRetryable: () => false }),
    expect: { deadLetters: ['1@1 processing x1'], retries: [] },
  },
  {
    name: 'a record Kafka refused is never retried',
    input: input({
      outputs: without(rec(0, 1)),
      failures: [
        fail(rec(0, 1), classifyKafkaError({ code: code('MSG_SIZE_TOO_LARGE'), message: 'big' }, 'delivery')),
      ],
    }),
    expect: { deadLetters: ['0@1 refused x1'], retries: [] },
  },
  {
    name: 'a poison record is dead-lettered unprocessed with its true delivery count',
    input: input({ outputs: without(rec(0, 1)), poison: [rec(0, 1)], deliveries: () => 6 }),
    expect: { deadLetters: ['0@1 redelivery-exhausted x6'], outcomes: [false, true, false, false, false] },
  },
  {
    name: 'a dead letter behind a held-back record waits with its partition',
    input: input({
      outputs: without(rec(0, 0), rec(0, 2)),
      failures: [fail(rec(0, 0)), fail(rec(0, 2), new DecodeError('bad'))],
    }),
    expect: { keep: ['1@0', '1@1'], deadLetters: [], retries: ['0@0 in 1000 attempt 1'] },
  },
  {
    name: 'with retry topics a retryable failure is forwarded and its offset commits',
    input: input({
      outputs: without(rec(1, 0)),
      failures: [fail(rec(1, 0))],
      policy: { ...policy, retryTopics: { delaysMs: [100, 200] } },
    }),
    expect: {
      keep: ['0@0', '0@1', '0@2', '1@0', '1@1'],
      forwards: ['t-retry-1'],
      retries: [],
      deadLetters: [],
    },
  },
  {
    name: 'with dead letters off, a record that would be dead-lettered stops the worker',
    input: input({
      outputs: without(rec(0, 2)),
      failures: [fail(rec(0, 2), new DecodeError('bad'))],
      policy: { ...policy, deadLetters: false },
    }),
    expect: {
      action: 'stop',
      reason:
        'record t:0@2 failed (decode) and record_errors.dead_letters is false: DecodeError: bad; ' +
        'consumption stopped, nothing of this batch committed',
    },
  },
  {
    name: 'past the dead-letter limit the worker stops instead of committing',
    input: input({
      outputs: without(rec(0, 2)),
      failures: [fail(rec(0, 2), new DecodeError('bad'))],
      deadLetterLimit: (o) => (o.includes(true) ? 'too many' : undefined),
    }),
    expect: {
      action: 'stop',
      reason: 'dead-letter limit exceeded: too many; consumption stopped, nothing of this batch committed',
    },
  },
];

describe('settlement decision (data in, plan out)', () => {
  for (const c of cases) {
    test(c.name, () => {
      const got = summary(decideSettlement(c.input));
      const picked = Object.fromEntries(Object.keys(c.expect).map((k) => [k, got[k as keyof typeof got]]));
      assert.deepEqual(picked, c.expect);
    });
  }

  test('a dead letter carries its origin, its error kind and its attempts in headers', () => {
    const plan = decideSettlement(
      input({ poison: [rec(1, 1)], deliveries: () => 4, outputs: without(rec(1, 1)) }),
    );
    assert.equal(plan.action, 'commit');
    const letter = plan.action === 'commit' ? plan.deadLetters[0]?.letter : undefined;
    assert.equal(letter?.topic, 't.DLT');
    assert.equal(letter?.headers?.[DLT_HEADERS.offset], '1');
    assert.equal(letter?.headers?.[DLT_HEADERS.errorKind], 'redelivery-exhausted');
    assert.equal(letter?.headers?.[DLT_HEADERS.attempts], '4');
    assert.equal(letter?.headers?.[DLT_HEADERS.stage], 's');
  });

  test('the decision changes nothing it reads: deciding twice gives the same plan', () => {
    const i = input({ outputs: without(rec(0, 1)), failures: [fail(rec(0, 1))], history: () => seen(1) });
    assert.deepEqual(summary(decideSettlement(i)), summary(decideSettlement(i)));
  });
});

describe('the round after Kafka refused outputs', () => {
  const refusal = (index: number) =>
    classifyKafkaError({ code: code('INVALID_RECORD'), message: 'Broker: Invalid record' }, 'delivery').about(
      { topic: 'o', partition: 0, index, bytes: 10 },
      `record ${index}`,
    );

  test("the refused records' outputs leave the batch and the records are dead-lettered in the next round", () => {
    const first = input();
    const next = afterRefusal(first, new RefusedOutputs([fail(rec(0, 1), refusal(1))], []));
    assert.ok(!('error' in next));
    assert.deepEqual(summary(decideSettlement(next)), {
      ...summary(decideSettlement(first)),
      outputs: ['0@0', '0@2', '1@0', '1@1'],
      deadLetters: ['0@1 refused x1'],
      outcomes: [false, true, false, false, false],
    });
  });

  test('a refusal the first hid (naming another record) leads to one more round with both dead-lettered', () => {
    const second = afterRefusal(input(), new RefusedOutputs([fail(rec(0, 1), refusal(1))], []));
    assert.ok(!('error' in second));
    const third = afterRefusal(second, new RefusedOutputs([fail(rec(1, 0), refusal(2))], []));
    assert.ok(!('error' in third));
    assert.deepEqual(summary(decideSettlement(third)).outputs, ['0@0', '0@2', '1@1']);
    assert.deepEqual(summary(decideSettlement(third)).deadLetters, ['0@1 refused x1', '1@0 refused x1']);
  });

  const errorCases: { name: string; refused: RefusedOutputs; after: SettlementInput }[] = [
    {
      name: 'a refusal no input record can be named for',
      refused: new RefusedOutputs([], [refusal(3)]),
      after: input(),
    },
    {
      name: 'a refusal naming only records already failed (their outputs already left the batch)',
      refused: new RefusedOutputs([fail(rec(0, 1), refusal(1))], []),
      after: input({ outputs: without(rec(0, 1)), failures: [fail(rec(0, 1), refusal(1))] }),
    },
  ];
  for (const c of errorCases) {
    test(`${c.name} goes to the loop's recovery`, () => {
      assert.ok('error' in afterRefusal(c.after, c.refused));
    });
  }
});
