import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyKafkaError } from '../../../src/kafka/classify.ts';
import { code } from '../../../src/kafka/error-codes.ts';
import { KafkaError, type ErrorKind, type KafkaOperation } from '../../../src/kafka/kafka-error.ts';
import {
  planRecovery,
  type RecoveryContext,
  type RecoveryPlan,
  type RecoverySituation,
} from '../../../src/runtime/recovery-plan.ts';

const ctx: RecoveryContext = { deadlinePassed: false, recentFatal: 0, fatalLimit: 3 };

function err(
  name: string,
  op: KafkaOperation,
  flags: { isFatal?: boolean; isRetriable?: boolean; isTxnRequiresAbort?: boolean } = {},
) {
  return classifyKafkaError({ code: code(name), message: name, ...flags }, op);
}

/** A KafkaError of a given kind, for the kinds classify.ts does not map codes to yet. */
function ofKind(kind: ErrorKind, name: string, op: KafkaOperation = 'produce') {
  return new KafkaError(kind, code(name), op, `${name} message`, {
    fatal: false,
    retriable: false,
    txnRequiresAbort: false,
  });
}

/** The action alone, as logs and metrics see it. */
function action(p: RecoveryPlan): Record<string, unknown> {
  const { abortFirst: _a, steps: _s, onStepFailure: _f, signals: _g, ...rest } = p;
  return rest;
}

function stopReason(p: RecoveryPlan): string {
  assert.equal(p.type, 'stop');
  return p.type === 'stop' ? p.reason : '';
}

describe('planRecovery in the loop', () => {
  it('resets the consumer after a membership error, aborting first', () => {
    const p = planRecovery(err('UNKNOWN_MEMBER_ID', 'send-offsets'), ctx);
    assert.deepEqual(action(p), { type: 'reset-consumer' });
    assert.deepEqual(p.steps, ['reset-consumer']);
    assert.equal(p.abortFirst, true);
    assert.deepEqual(action(planRecovery(err('_MAX_POLL_EXCEEDED', 'consume'), ctx)), {
      type: 'reset-consumer',
    });
  });

  it('reconnects after a transport error without aborting (the producer is rebuilt anyway)', () => {
    const p = planRecovery(err('_TRANSPORT', 'consume'), ctx);
    assert.deepEqual(action(p), { type: 'reconnect' });
    assert.deepEqual(p.steps, ['reconnect']);
    assert.equal(p.abortFirst, false);
    assert.deepEqual(action(planRecovery(err('_ALL_BROKERS_DOWN', 'connect'), ctx)), { type: 'reconnect' });
  });

  it('rewinds to the committed offsets after an abortable error', () => {
    const p = planRecovery(err('CONCURRENT_TRANSACTIONS', 'produce', { isTxnRequiresAbort: true }), ctx);
    assert.deepEqual(action(p), { type: 'rewind' });
    assert.deepEqual(p.steps, ['rewind']);
    assert.equal(p.abortFirst, true);
  });

  it('starts a consumer instead of rewinding when there is none', () => {
    const p = planRecovery(err('CONCURRENT_TRANSACTIONS', 'produce', { isTxnRequiresAbort: true }), {
      ...ctx,
      hasConsumer: false,
    });
    assert.deepEqual(p.steps, ['start-consumer']);
  });

  it('rewinds after an unclassified error while it stays under its limit', () => {
    const other = classifyKafkaError(new Error('?'), 'client');
    assert.deepEqual(action(planRecovery(other, ctx)), { type: 'rewind' });
    assert.deepEqual(action(planRecovery(other, { ...ctx, recentOther: 5, otherLimit: 5 })), {
      type: 'rewind',
    });
  });

  it('stops naming the error when the same unclassified error exceeds its limit', () => {
    const other = classifyKafkaError(new Error('disk on fire'), 'client');
    const reason = stopReason(planRecovery(other, { ...ctx, recentOther: 6, otherLimit: 5 }));
    assert.match(reason, /6 times/);
    assert.match(reason, /disk on fire/);
  });

  it('retries a retriable call in place while its deadline has not passed: no abort, no step', () => {
    for (const op of ['commit-transaction', 'init-transactions', 'send-offsets'] as const) {
      const p = planRecovery(err('COORDINATOR_NOT_AVAILABLE', op, { isRetriable: true }), ctx);
      assert.deepEqual(action(p), { type: 'retry-in-place' });
      assert.deepEqual(p.steps, []);
      assert.equal(p.abortFirst, false);
    }
  });

  it('rewinds instead of retrying in place when a transaction is open: the batch is gone', () => {
    const e = err('COORDINATOR_NOT_AVAILABLE', 'send-offsets', { isRetriable: true });
    assert.deepEqual(action(planRecovery(e, { ...ctx, transactionOpen: true })), { type: 'rewind' });
  });

  it('recreates the producer when a commit outcome is unknown after the deadline', () => {
    const p = planRecovery(err('_TIMED_OUT', 'commit-transaction', { isRetriable: true }), {
      ...ctx,
      deadlinePassed: true,
    });
    assert.deepEqual(action(p), { type: 'recreate-producer', why: 'unknown-commit-outcome' });
    assert.deepEqual(p.steps, ['close-producer', 'start-producer', 'reset-consumer']);
  });

  it('recreates the producer when an abort fails after the deadline', () => {
    const e = err('_TIMED_OUT', 'abort-transaction', { isRetriable: true });
    assert.deepEqual(action(planRecovery(e, { ...ctx, deadlinePassed: true })), {
      type: 'recreate-producer',
      why: 'abort-failed',
    });
  });

  it('reconnects when init or send-offsets still fails after the deadline', () => {
    for (const op of ['init-transactions', 'send-offsets'] as const)
      assert.deepEqual(
        action(
          planRecovery(err('COORDINATOR_NOT_AVAILABLE', op, { isRetriable: true }), {
            ...ctx,
            deadlinePassed: true,
          }),
        ),
        { type: 'reconnect' },
      );
  });

  it('stops a fenced producer at once: a newer instance owns the transactional id, this one is the zombie', () => {
    for (const name of ['PRODUCER_FENCED', '_FENCED'])
      assert.match(stopReason(planRecovery(err(name, 'commit-transaction'), ctx)), /zombie/);
  });

  it('under transaction version 2, recreates the producer after the first fence on a commit that took seconds (a retried end the broker can mistake for a zombie)', () => {
    const v2 = { ...ctx, endBumpsEpoch: true, recentEndFences: 1, endCallMs: 8_000 };
    const p = planRecovery(err('_FENCED', 'commit-transaction', { isFatal: true }), v2);
    assert.deepEqual(action(p), { type: 'recreate-producer', why: 'fenced-end' });
    assert.deepEqual(p.steps, ['close-producer', 'start-producer', 'reset-consumer']);
    // A fenced producer cannot abort: the transaction dies with it.
    assert.equal(p.abortFirst, false);
    assert.equal(p.onStepFailure, 'replan');
  });

  it('under transaction version 2, a fenced abort that took seconds gets a new producer once (an abort is a transaction end too), then stops', () => {
    const v2 = { ...ctx, situation: 'abort' as const, endBumpsEpoch: true, endCallMs: 8_000 };
    const e = err('_FENCED', 'abort-transaction', { isFatal: true });
    const p = planRecovery(e, { ...v2, recentEndFences: 1 });
    assert.deepEqual(action(p), { type: 'recreate-producer', why: 'fenced-end' });
    assert.deepEqual(p.steps, ['close-producer', 'start-producer']);
    assert.equal(p.abortFirst, false);
    const second = planRecovery(e, { ...v2, recentEndFences: 2 });
    assert.match(stopReason(second), /zombie/);
    assert.deepEqual(second.steps, ['close-producer']);
    assert.match(stopReason(planRecovery(e, { ...v2, endBumpsEpoch: false, recentEndFences: 1 })), /zombie/);
    // The abort of a worker that already stops (a zombie found in the loop) never starts a producer:
    // it would fence the instance that fenced this one.
    const stopping = planRecovery(e, { ...v2, recentEndFences: 1, stopping: true });
    assert.match(stopReason(stopping), /zombie/);
    assert.deepEqual(stopping.steps, ['close-producer']);
  });

  it('under transaction version 2, a fence on an end answered at once is a zombie (retries take seconds)', () => {
    const v2 = { ...ctx, endBumpsEpoch: true, recentEndFences: 1 };
    for (const op of ['commit-transaction', 'abort-transaction'] as const)
      for (const endCallMs of [undefined, 40, 2_999])
        assert.match(
          stopReason(
            planRecovery(err('_FENCED', op), {
              ...v2,
              situation: op === 'abort-transaction' ? 'abort' : 'loop',
              ...(endCallMs === undefined ? {} : { endCallMs }),
            }),
          ),
          /zombie/,
        );
  });

  it('under transaction version 2, a second fence on a commit within the window, or a fence anywhere else, is a zombie', () => {
    const v2 = { ...ctx, endBumpsEpoch: true, endCallMs: 8_000 };
    assert.match(
      stopReason(planRecovery(err('_FENCED', 'commit-transaction'), { ...v2, recentEndFences: 2 })),
      /zombie/,
    );
    for (const op of ['produce', 'send-offsets', 'begin-transaction'] as const)
      assert.match(stopReason(planRecovery(err('_FENCED', op), { ...v2, recentEndFences: 1 })), /zombie/);
    assert.match(
      stopReason(planRecovery(err('_FENCED', 'commit-transaction'), { ...ctx, recentEndFences: 1 })),
      /zombie/,
    );
  });

  it('recreates a fatally failed producer up to the limit', () => {
    const e = err('_FATAL', 'commit-transaction');
    for (const recentFatal of [1, 3])
      assert.deepEqual(action(planRecovery(e, { ...ctx, recentFatal })), {
        type: 'recreate-producer',
        why: 'fatal',
      });
  });

  it('stops when fatal errors exceed the limit within a minute', () => {
    const p = planRecovery(err('_STATE', 'produce', { isFatal: true }), { ...ctx, recentFatal: 4 });
    assert.match(stopReason(p), /failed fatally 4 times/);
  });

  it('stops on a configuration error, naming the code and the message', () => {
    assert.match(
      stopReason(planRecovery(err('_INVALID_ARG', 'produce'), ctx)),
      /configuration error: _INVALID_ARG/,
    );
  });

  it('stops on an authorization error, naming the code', () => {
    const reason = stopReason(planRecovery(ofKind('authorization', 'TOPIC_AUTHORIZATION_FAILED'), ctx));
    assert.match(reason, /not authorized: TOPIC_AUTHORIZATION_FAILED/);
  });

  it('rewinds after a refusal that could not be traced to its input record, and stops when it repeats', () => {
    const refused = ofKind('refused', 'MSG_SIZE_TOO_LARGE');
    assert.deepEqual(action(planRecovery(refused, { ...ctx, recentOther: 2, otherLimit: 3 })), {
      type: 'rewind',
    });
    assert.match(
      stopReason(planRecovery(refused, { ...ctx, recentOther: 4, otherLimit: 3 })),
      /refused the same output 4 times .* cannot be traced to its input record/,
    );
  });
});

describe('planRecovery per situation', () => {
  const at = (situation: RecoverySituation, extra: Partial<RecoveryContext> = {}) => ({
    ...ctx,
    deadlinePassed: true,
    situation,
    ...extra,
  });

  it('at start: only transport (and retriable) failures enter the reconnect loop', () => {
    assert.deepEqual(action(planRecovery(err('_ALL_BROKERS_DOWN', 'connect'), at('start'))), {
      type: 'reconnect',
    });
    assert.deepEqual(
      action(
        planRecovery(
          err('COORDINATOR_NOT_AVAILABLE', 'init-transactions', { isRetriable: true }),
          at('start'),
        ),
      ),
      { type: 'reconnect' },
    );
    assert.match(
      stopReason(planRecovery(err('_INVALID_ARG', 'connect'), at('start'))),
      /configuration error/,
    );
    assert.match(
      stopReason(planRecovery(ofKind('authorization', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED'), at('start'))),
      /not authorized/,
    );
    assert.match(
      stopReason(planRecovery(classifyKafkaError(new Error('bad'), 'connect'), at('start'))),
      /could not start/,
    );
  });

  it('a consumer error of kind membership resets the consumer and raises the membership alert', () => {
    const p = planRecovery(err('_MAX_POLL_EXCEEDED', 'consume'), at('consumer-error'));
    assert.deepEqual(action(p), { type: 'reset-consumer' });
    assert.deepEqual(p.signals, ['max-poll-exceeded', 'membership-error']);
  });

  it('a consumer error "all brokers down" reconnects; a single broker transport error is left to the client', () => {
    assert.deepEqual(action(planRecovery(err('_ALL_BROKERS_DOWN', 'consume'), at('consumer-error'))), {
      type: 'reconnect',
    });
    assert.deepEqual(action(planRecovery(err('_TRANSPORT', 'consume'), at('consumer-error'))), {
      type: 'ignore',
    });
  });

  it('a consumer error of kind authorization stops', () => {
    const p = planRecovery(
      ofKind('authorization', 'GROUP_AUTHORIZATION_FAILED', 'consume'),
      at('consumer-error'),
    );
    assert.match(stopReason(p), /not authorized/);
  });

  it('a failed abort recreates the producer without aborting again', () => {
    const p = planRecovery(err('_TIMED_OUT', 'abort-transaction', { isRetriable: true }), at('abort'));
    assert.deepEqual(action(p), { type: 'recreate-producer', why: 'abort-failed' });
    assert.deepEqual(p.steps, ['close-producer', 'start-producer']);
    assert.equal(p.abortFirst, false);
  });

  it('a failed abort of a fenced producer closes it and stops; while stopping a new producer aborts the transaction at once', () => {
    const fenced = planRecovery(err('PRODUCER_FENCED', 'abort-transaction'), at('abort'));
    assert.match(stopReason(fenced), /zombie/);
    assert.deepEqual(fenced.steps, ['close-producer']);
    assert.equal(fenced.abortFirst, false);
    const stopping = planRecovery(
      err('_TIMED_OUT', 'abort-transaction', { isRetriable: true }),
      at('abort', { stopping: true }),
    );
    assert.deepEqual(action(stopping), { type: 'close-producer' });
    assert.deepEqual(stopping.steps, ['close-producer', 'start-producer', 'close-producer']);
  });

  it('a failed rewind resets the consumer', () => {
    const p = planRecovery(err('_STATE', 'seek'), at('rewind'));
    assert.deepEqual(action(p), { type: 'reset-consumer' });
  });

  it('a failed recovery step reconnects, and stops if that fails too', () => {
    const p = planRecovery(err('_TRANSPORT', 'connect'), at('step-failed'));
    assert.deepEqual(action(p), { type: 'reconnect' });
    assert.equal(p.onStepFailure, 'stop');
  });

  it('the reconnect loop waits out transport errors only', () => {
    assert.deepEqual(action(planRecovery(err('_TRANSPORT', 'connect'), at('reconnect'))), {
      type: 'reconnect',
    });
    assert.match(
      stopReason(planRecovery(err('_INVALID_ARG', 'connect'), at('reconnect'))),
      /configuration error/,
    );
  });

  it('a wrapped call is retried in place only while retriable and before its deadline', () => {
    const e = err('COORDINATOR_NOT_AVAILABLE', 'send-offsets', { isRetriable: true });
    assert.equal(planRecovery(e, at('call', { deadlinePassed: false })).type, 'retry-in-place');
    assert.notEqual(planRecovery(e, at('call', { deadlinePassed: true })).type, 'retry-in-place');
  });

  it('an abort that conflicts with a commit still running is not retried in place; other conflicting calls are', () => {
    const conflict = (op: KafkaOperation) => err('_CONFLICT', op);
    assert.notEqual(
      planRecovery(conflict('abort-transaction'), at('call', { deadlinePassed: false })).type,
      'retry-in-place',
    );
    assert.equal(
      planRecovery(conflict('send-offsets'), at('call', { deadlinePassed: false })).type,
      'retry-in-place',
    );
  });
});
