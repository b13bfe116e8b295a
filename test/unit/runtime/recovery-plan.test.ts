import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyKafkaError } from '../../../src/kafka/classify.ts';
import { code } from '../../../src/kafka/error-codes.ts';
import type { KafkaOperation } from '../../../src/kafka/kafka-error.ts';
import { planRecovery, type RecoveryContext } from '../../../src/runtime/recovery-plan.ts';

const ctx: RecoveryContext = { deadlinePassed: false, recentFatal: 0, fatalLimit: 3 };

function err(
  name: string,
  op: KafkaOperation,
  flags: { isFatal?: boolean; isRetriable?: boolean; isTxnRequiresAbort?: boolean } = {},
) {
  return classifyKafkaError({ code: code(name), message: name, ...flags }, op);
}

describe('planRecovery', () => {
  it('resets the consumer after a membership error', () => {
    assert.deepEqual(planRecovery(err('UNKNOWN_MEMBER_ID', 'send-offsets'), ctx), { type: 'reset-consumer' });
    assert.deepEqual(planRecovery(err('_MAX_POLL_EXCEEDED', 'consume'), ctx), { type: 'reset-consumer' });
  });

  it('reconnects after a transport error', () => {
    assert.deepEqual(planRecovery(err('_TRANSPORT', 'consume'), ctx), { type: 'reconnect' });
    assert.deepEqual(planRecovery(err('_ALL_BROKERS_DOWN', 'connect'), ctx), { type: 'reconnect' });
  });

  it('rewinds to the committed offsets after an abortable error', () => {
    const e = err('CONCURRENT_TRANSACTIONS', 'produce', { isTxnRequiresAbort: true });
    assert.deepEqual(planRecovery(e, ctx), { type: 'rewind' });
  });

  it('rewinds after an unclassified error', () => {
    assert.deepEqual(planRecovery(classifyKafkaError(new Error('?'), 'client'), ctx), { type: 'rewind' });
  });

  it('retries a retriable call in place while its deadline has not passed', () => {
    for (const op of ['commit-transaction', 'init-transactions', 'send-offsets'] as const)
      assert.deepEqual(planRecovery(err('COORDINATOR_NOT_AVAILABLE', op, { isRetriable: true }), ctx), {
        type: 'retry-in-place',
      });
  });

  it('recreates the producer when a commit outcome is unknown after the deadline', () => {
    const e = err('_TIMED_OUT', 'commit-transaction', { isRetriable: true });
    assert.deepEqual(planRecovery(e, { ...ctx, deadlinePassed: true }), {
      type: 'recreate-producer',
      why: 'unknown-commit-outcome',
    });
  });

  it('recreates the producer when an abort fails after the deadline', () => {
    const e = err('_TIMED_OUT', 'abort-transaction', { isRetriable: true });
    assert.deepEqual(planRecovery(e, { ...ctx, deadlinePassed: true }), {
      type: 'recreate-producer',
      why: 'abort-failed',
    });
  });

  it('reconnects when init or send-offsets still fails after the deadline', () => {
    for (const op of ['init-transactions', 'send-offsets'] as const)
      assert.deepEqual(
        planRecovery(err('COORDINATOR_NOT_AVAILABLE', op, { isRetriable: true }), {
          ...ctx,
          deadlinePassed: true,
        }),
        { type: 'reconnect' },
      );
  });

  it('stops a fenced producer at once: a newer instance owns the transactional id, this one is the zombie', () => {
    for (const name of ['PRODUCER_FENCED', '_FENCED']) {
      const action = planRecovery(err(name, 'commit-transaction'), ctx);
      assert.equal(action.type, 'stop');
      assert.match(action.type === 'stop' ? action.reason : '', /zombie/);
    }
  });

  it('recreates a fatally failed producer up to the limit', () => {
    const e = err('_FATAL', 'commit-transaction');
    assert.deepEqual(planRecovery(e, { ...ctx, recentFatal: 1 }), {
      type: 'recreate-producer',
      why: 'fatal',
    });
    assert.deepEqual(planRecovery(e, { ...ctx, recentFatal: 3 }), {
      type: 'recreate-producer',
      why: 'fatal',
    });
  });

  it('stops when fatal errors exceed the limit within a minute', () => {
    const action = planRecovery(err('_STATE', 'produce', { isFatal: true }), { ...ctx, recentFatal: 4 });
    assert.equal(action.type, 'stop');
    assert.match(action.type === 'stop' ? action.reason : '', /failed fatally 4 times/);
  });

  it('stops on a configuration error', () => {
    const action = planRecovery(err('_INVALID_ARG', 'produce'), ctx);
    assert.equal(action.type, 'stop');
    assert.match(action.type === 'stop' ? action.reason : '', /configuration error: _INVALID_ARG/);
  });
});
