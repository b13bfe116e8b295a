import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { code } from '../../../../src/kafka/error-codes.ts';
import type { OutgoingRecord } from '../../../../src/kafka/records.ts';
import type { CommitInfo } from '../../../../src/runtime/worker-options.ts';
import { TransactionRunner, type Ending } from '../../../../src/runtime/worker/transaction-runner.ts';
import { Transaction, type TransactionSession } from '../../../../src/runtime/worker/transaction.ts';
import { raw } from '../../../support/worker-fakes.ts';

const INFO: CommitInfo = { epoch: 1, records: 2, outputs: 1, deadLetters: 0 };

/** A runner on a recording producer; every step of the sequence lands in `steps`, in order. */
function setUp(opts: { stores?: boolean; failCommit?: boolean } = {}) {
  const steps: string[] = [];
  let failCommit = opts.failCommit ?? false;
  const native = (name: string) => () => {
    steps.push(name);
    if (name === 'commitTransaction' && failCommit) {
      failCommit = false;
      return Promise.reject(raw(code('_FAIL'), 'commit failed'));
    }
    return Promise.resolve();
  };
  const producer = {
    beginTransaction: native('begin'),
    produce: (r: OutgoingRecord) => native(`produce ${String(r.value)}`)(),
    sendOffsets: native('sendOffsets'),
    commitTransaction: native('commitTransaction'),
    abortTransaction: native('abortTransaction'),
    deliveredOffsets: () => new Map<string, number>(),
  };
  const session = {
    producer,
    consumer: {},
    retryInPlace: <T>(_op: string, fn: () => Promise<T>) => fn(),
  } as unknown as TransactionSession;
  const txn = new Transaction(session, 1_000);
  txn.producerReady();
  const runner = new TransactionRunner({
    txn,
    producer: () => producer,
    hooks: {
      beforeSendOffsets: () => void steps.push('hook beforeSendOffsets'),
      beforeCommit: () => void steps.push('hook beforeCommit'),
      afterCommit: () => void steps.push('hook afterCommit'),
    },
    stores: opts.stores
      ? {
          changelogRecords: () => [{ topic: 'changelog', value: 'c' }],
          committing: () => void steps.push('stores committing'),
          committed: () => void steps.push('stores committed'),
        }
      : undefined,
    committed: (produced) => void steps.push(`committed ${produced}`),
    abort: async (reason) => {
      steps.push(`abort ${reason}`);
      await txn.abort();
    },
  });
  return { runner, txn, steps };
}

const ending = (over: Partial<Ending> = {}): Ending => ({
  offsets: [{ topic: 'in', partition: 0, offset: 2 }],
  info: INFO,
  produced: 1,
  startedAt: 0,
  staleReason: () => undefined,
  ...over,
});

describe('the transaction runner: begin, produce, end in one order', () => {
  it('a batch with state stores: changelog, hooks, offsets, commit, bookkeeping, in order', async () => {
    const { runner, txn, steps } = setUp({ stores: true });
    await runner.begin();
    await runner.produce([{ topic: 'out', value: 'o' }]);
    assert.equal(await runner.end(ending()), undefined);
    assert.deepEqual(steps, [
      'begin',
      'produce o',
      'produce c',
      'hook beforeSendOffsets',
      'sendOffsets',
      'hook beforeCommit',
      'stores committing',
      'commitTransaction',
      'stores committed',
      'committed 1',
      'hook afterCommit',
    ]);
    assert.equal(txn.state, 'ready');
  });

  it('a timer call: no offsets and no hooks', async () => {
    const { runner, steps } = setUp({ stores: true });
    await runner.begin();
    await runner.end(ending({ offsets: undefined, info: undefined, produced: 0, changelog: [] }));
    assert.deepEqual(steps, [
      'begin',
      'stores committing',
      'commitTransaction',
      'stores committed',
      'committed 0',
    ]);
  });

  it('a stale transaction is aborted before its offsets are sent, and says why', async () => {
    const { runner, txn, steps } = setUp();
    await runner.begin();
    assert.equal(await runner.end(ending({ staleReason: () => 'revoked' })), 'revoked');
    assert.deepEqual(steps, ['begin', 'hook beforeSendOffsets', 'abort stale', 'abortTransaction']);
    assert.equal(txn.state, 'ready');
  });

  it('offsets and commit behind: end returns at once, settle waits and surfaces a failed commit', async () => {
    const { runner, txn, steps } = setUp({ failCommit: true });
    await runner.begin();
    const end = runner.end(ending({ behind: 'offsets-and-commit' }));
    assert.equal(await end, undefined);
    await assert.rejects(runner.settle(), /commit failed/);
    assert.equal(txn.state, 'failed', 'a recovery must abort it');
    assert.equal(txn.open, true);
    assert.ok(!steps.includes('committed 1'));
    await runner.settle();
  });

  it('the commit behind only when the ending says so, and only after the offsets are sent', async () => {
    for (const behind of ['commit' as const, undefined]) {
      const { runner, txn, steps } = setUp();
      await runner.begin();
      await runner.end(ending(behind === undefined ? {} : { behind }));
      assert.deepEqual(steps.slice(1, 4), ['hook beforeSendOffsets', 'sendOffsets', 'hook beforeCommit']);
      await runner.settle();
      assert.equal(txn.state, 'ready');
      assert.deepEqual(steps.slice(-3), ['commitTransaction', 'committed 1', 'hook afterCommit']);
    }
  });

  it('a transaction cannot begin while another is open', async () => {
    const { runner } = setUp();
    await runner.begin();
    await assert.rejects(runner.begin(), /begin is illegal in state open/);
  });
});
