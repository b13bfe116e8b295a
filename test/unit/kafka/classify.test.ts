import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyKafkaError, syntheticKafkaError } from '../../../src/kafka/classify.ts';
import { code, CODES } from '../../../src/kafka/error-codes.ts';
import { ERROR_TABLE } from '../../../src/kafka/error-table.ts';
import { KafkaError, type ErrorKind, type KafkaOperation } from '../../../src/kafka/kafka-error.ts';

/** An error as the librdkafka binding reports it. */
function raw(
  name: string,
  flags: { isFatal?: boolean; isRetriable?: boolean; isTxnRequiresAbort?: boolean } = {},
) {
  return { code: code(name), message: `broker said ${name}`, ...flags };
}

/** One representative list per group of the table (error-table.ts); each must classify to its kind. */
const GROUPS: Record<Exclude<ErrorKind, 'other'>, string[]> = {
  membership: [
    'UNKNOWN_MEMBER_ID',
    'ILLEGAL_GENERATION',
    'REBALANCE_IN_PROGRESS',
    'FENCED_INSTANCE_ID',
    '_MAX_POLL_EXCEEDED',
    'FENCED_MEMBER_EPOCH',
    'STALE_MEMBER_EPOCH',
    '_ASSIGNMENT_LOST',
  ],
  transport: [
    '_TIMED_OUT',
    '_MSG_TIMED_OUT',
    '_TRANSPORT',
    '_RESOLVE',
    '_ALL_BROKERS_DOWN',
    'NETWORK_EXCEPTION',
  ],
  fenced: ['_FENCED', 'PRODUCER_FENCED'],
  fatal: ['_FATAL', '_CRIT_SYS_RESOURCE', '_GAPLESS_GUARANTEE'],
  config: ['_INVALID_ARG', '_UNKNOWN_TOPIC', 'UNKNOWN_TOPIC_OR_PART', 'UNSUPPORTED_COMPRESSION_TYPE'],
  authorization: [
    'TOPIC_AUTHORIZATION_FAILED',
    'GROUP_AUTHORIZATION_FAILED',
    'CLUSTER_AUTHORIZATION_FAILED',
    'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
    'SASL_AUTHENTICATION_FAILED',
  ],
  refused: [
    'MSG_SIZE_TOO_LARGE',
    'RECORD_LIST_TOO_LARGE',
    'INVALID_RECORD',
    'INVALID_TIMESTAMP',
    'INVALID_MSG_SIZE',
    '_VALUE_SERIALIZATION',
  ],
  abortable: ['_INVALID_DIFFERENT_RECORD', '_PURGE_QUEUE'],
  retriable: ['_QUEUE_FULL', '_WAIT_COORD', '_CONFLICT'],
};

describe('classifyKafkaError', () => {
  for (const [kind, names] of Object.entries(GROUPS)) {
    it(`maps the ${kind} group to ${kind}: ${names.join(', ')}`, () => {
      for (const name of names) {
        const err = classifyKafkaError(raw(name), 'produce');
        assert.ok(err instanceof KafkaError);
        assert.equal(err.kind, kind, name);
        assert.equal(err.code, code(name));
        assert.equal(err.operation, 'produce');
      }
    });
  }

  it('decides every code the binding knows, and knows no code the binding lacks', () => {
    const bound = Object.keys(CODES).map((n) => n.replace(/^ERR_/, ''));
    assert.deepEqual(
      bound.filter((n) => ERROR_TABLE[n] === undefined),
      [],
    );
    assert.deepEqual(
      Object.keys(ERROR_TABLE).filter((n) => !bound.includes(n)),
      [],
    );
  });

  it('gives aliases of one code number the same decision', () => {
    const byNumber = new Map<number, string[]>();
    for (const [n, v] of Object.entries(CODES)) byNumber.set(v, [...(byNumber.get(v) ?? []), n]);
    for (const names of byNumber.values()) {
      const decisions = new Set(names.map((n) => JSON.stringify(ERROR_TABLE[n.replace(/^ERR_/, '')])));
      assert.equal(decisions.size, 1, names.join(' / '));
    }
  });

  it('keeps a refused record refused although librdkafka flags the commit abortable', () => {
    const err = classifyKafkaError(
      raw('MSG_SIZE_TOO_LARGE', { isTxnRequiresAbort: true }),
      'commit-transaction',
    );
    assert.equal(err.kind, 'refused');
    assert.equal(err.flags.txnRequiresAbort, true);
  });

  it('treats CORRUPT_MESSAGE as refused for a produced record only', () => {
    assert.equal(classifyKafkaError(raw('INVALID_MSG'), 'delivery').kind, 'refused');
    assert.equal(classifyKafkaError(raw('INVALID_MSG'), 'consume').kind, 'other');
  });

  it('reports a missing transactional-id ACL as authorization, not as a fence, although flagged fatal', () => {
    const err = classifyKafkaError(
      raw('TRANSACTIONAL_ID_AUTHORIZATION_FAILED', { isFatal: true }),
      'init-transactions',
    );
    assert.equal(err.kind, 'authorization');
  });

  it('lets the flags decide a code whose meaning depends on the occurrence', () => {
    assert.equal(
      classifyKafkaError(raw('NOT_ENOUGH_REPLICAS', { isRetriable: true }), 'produce').kind,
      'retriable',
    );
    assert.equal(
      classifyKafkaError(raw('NOT_ENOUGH_REPLICAS', { isTxnRequiresAbort: true }), 'commit-transaction').kind,
      'abortable',
    );
    assert.equal(classifyKafkaError(raw('NOT_ENOUGH_REPLICAS'), 'produce').kind, 'other');
  });

  it('treats a moving leader as retriable when unflagged (a metadata read at start), flags still first', () => {
    assert.equal(classifyKafkaError(raw('NOT_LEADER_FOR_PARTITION'), 'admin').kind, 'retriable');
    assert.equal(classifyKafkaError(raw('LEADER_NOT_AVAILABLE'), 'admin').kind, 'retriable');
    assert.equal(
      classifyKafkaError(raw('NOT_LEADER_FOR_PARTITION', { isTxnRequiresAbort: true }), 'commit-transaction')
        .kind,
      'abortable',
    );
    assert.equal(
      classifyKafkaError(raw('NOT_LEADER_FOR_PARTITION', { isFatal: true }), 'produce').kind,
      'fatal',
    );
  });

  it('treats an unknown partition as a mistake only for a produced record: a read gets it while the metadata lacks the partition', () => {
    assert.equal(classifyKafkaError(raw('_UNKNOWN_PARTITION'), 'produce').kind, 'config');
    assert.equal(classifyKafkaError(raw('_UNKNOWN_PARTITION'), 'admin').kind, 'retriable');
  });

  it('waits out a KRaft cluster whose brokers are all fenced for a moment, but not a replication factor above the brokers', () => {
    const fenced = 'Unable to replicate the partition 1 time(s): All brokers are currently fenced.';
    const tooFew =
      'Unable to replicate the partition 3 time(s): The target replication factor of 3 cannot be reached because only 1 broker(s) are registered.';
    const name = 'INVALID_REPLICATION_FACTOR';
    assert.equal(classifyKafkaError({ code: code(name), message: fenced }, 'admin').kind, 'retriable');
    assert.equal(classifyKafkaError({ code: code(name), message: tooFew }, 'admin').kind, 'config');
  });

  for (const op of ['commit-transaction', 'init-transactions', 'send-offsets'] as KafkaOperation[]) {
    it(`maps a retriable error on ${op} to retriable (retried in place)`, () => {
      const err = classifyKafkaError(raw('COORDINATOR_NOT_AVAILABLE', { isRetriable: true }), op);
      assert.equal(err.kind, 'retriable');
      assert.equal(err.flags.retriable, true);
    });
  }

  it('maps a retriable timeout of a transactional call to retriable, not transport', () => {
    // The producer's JS guard reports a call that never answered exactly like this.
    assert.equal(
      classifyKafkaError(raw('_TIMED_OUT', { isRetriable: true }), 'commit-transaction').kind,
      'retriable',
    );
    assert.equal(classifyKafkaError(raw('_TIMED_OUT', { isRetriable: true }), 'consume').kind, 'transport');
  });

  it('maps an error flagged txnRequiresAbort to abortable', () => {
    const err = classifyKafkaError(raw('CONCURRENT_TRANSACTIONS', { isTxnRequiresAbort: true }), 'produce');
    assert.equal(err.kind, 'abortable');
    assert.equal(err.flags.txnRequiresAbort, true);
  });

  it('maps any other error flagged fatal to fatal', () => {
    const err = classifyKafkaError(raw('_STATE', { isFatal: true }), 'commit-transaction');
    assert.equal(err.kind, 'fatal');
    assert.equal(err.flags.fatal, true);
  });

  it('fenced beats fatal, txnRequiresAbort and retriable: a fenced producer is a zombie', () => {
    const flags = { isFatal: true, isTxnRequiresAbort: true, isRetriable: true };
    assert.equal(classifyKafkaError(raw('PRODUCER_FENCED', flags), 'commit-transaction').kind, 'fenced');
  });

  it('treats INVALID_PRODUCER_EPOCH flagged abortable as abortable, not a fence (KIP-360 epoch bump)', () => {
    const abortable = raw('INVALID_PRODUCER_EPOCH', { isTxnRequiresAbort: true });
    assert.equal(classifyKafkaError(abortable, 'commit-transaction').kind, 'abortable');
    assert.equal(
      classifyKafkaError(raw('INVALID_PRODUCER_EPOCH', { isFatal: true }), 'produce').kind,
      'fatal',
    );
  });

  it('keeps ILLEGAL_GENERATION on send-offsets membership although librdkafka flags it abortable', () => {
    const err = classifyKafkaError(raw('ILLEGAL_GENERATION', { isTxnRequiresAbort: true }), 'send-offsets');
    assert.equal(err.kind, 'membership');
    assert.equal(err.flags.txnRequiresAbort, true);
  });

  it('keeps UNKNOWN_MEMBER_ID membership when also flagged retriable', () => {
    const err = classifyKafkaError(raw('UNKNOWN_MEMBER_ID', { isRetriable: true }), 'commit-offsets');
    assert.equal(err.kind, 'membership');
  });

  it('maps a retriable error of another operation to retriable, an unflagged unknown code to other', () => {
    assert.equal(
      classifyKafkaError(raw('NOT_COORDINATOR', { isRetriable: true }), 'produce').kind,
      'retriable',
    );
    assert.equal(classifyKafkaError(raw('NOT_COORDINATOR'), 'produce').kind, 'other');
    assert.equal(classifyKafkaError(raw('OFFSET_OUT_OF_RANGE'), 'consume').kind, 'other');
  });

  it('classifies an error only once: a KafkaError passes through unchanged', () => {
    const first = classifyKafkaError(raw('_TRANSPORT'), 'consume');
    assert.equal(classifyKafkaError(first, 'commit-transaction'), first);
    assert.equal(first.operation, 'consume');
  });

  it('maps something that is not a client error to other with code _FAIL', () => {
    const plain = classifyKafkaError(new TypeError('undefined is not a function'), 'client');
    assert.equal(plain.kind, 'other');
    assert.equal(plain.codeName, '_FAIL');
    assert.equal(plain.message, 'undefined is not a function');
    const str = classifyKafkaError('weird', 'client');
    assert.equal(str.kind, 'other');
    assert.equal(str.message, 'weird');
  });

  it('builds synthetic errors for fault injection through the same mapping', () => {
    const err = syntheticKafkaError('REBALANCE_IN_PROGRESS', 'send-offsets', { isTxnRequiresAbort: true });
    assert.equal(err.kind, 'membership');
    assert.equal(err.message, 'injected REBALANCE_IN_PROGRESS');
    assert.throws(() => syntheticKafkaError('NO_SUCH_CODE', 'consume'), /unknown librdkafka error name/);
  });

  it('logs kind, code name, operation and flags', () => {
    const err = classifyKafkaError(raw('_MAX_POLL_EXCEEDED'), 'consume');
    assert.deepEqual(err.toLog(), {
      kind: 'membership',
      code: '_MAX_POLL_EXCEEDED',
      operation: 'consume',
      message: 'broker said _MAX_POLL_EXCEEDED',
      fatal: false,
      retriable: false,
      txnRequiresAbort: false,
    });
  });
});
