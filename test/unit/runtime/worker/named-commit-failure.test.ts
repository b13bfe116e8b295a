import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classifyKafkaError } from '../../../../src/kafka/classify.ts';
import { code } from '../../../../src/kafka/error-codes.ts';
import { KafkaError } from '../../../../src/kafka/kafka-error.ts';
import type { TransactionTally } from '../../../../src/kafka/producer-deliveries.ts';
import { namedCommitFailure } from '../../../../src/runtime/worker/committer.ts';

const refusedDelivery = new KafkaError(
  'authorization',
  code('TOPIC_AUTHORIZATION_FAILED'),
  'delivery',
  'Broker: Topic authorization failed: producing to topic out',
  { fatal: false, retriable: false, txnRequiresAbort: false },
  { topic: 'out', partition: 1, index: 0, bytes: 213 },
);

/** A producer whose failed delivery report reaches JavaScript only with the next flush. */
function producer(): { tally(): TransactionTally; flush(): Promise<void>; flushes: number } {
  let arrived = false;
  const p = {
    flushes: 0,
    tally: (): TransactionTally => ({
      produced: 1,
      delivered: 0,
      purged: 0,
      failed: arrived ? 1 : 0,
      refused: [],
      ...(arrived ? { firstError: refusedDelivery } : {}),
    }),
    flush: () => {
      p.flushes += 1;
      arrived = true;
      return Promise.resolve();
    },
  };
  return p;
}

describe('the error a failed transaction is reported as', () => {
  it("a produce refusal that failed the offsets' call is named by its delivery report, not as the group's ACL", async () => {
    const sendOffsets = classifyKafkaError(
      {
        code: code('TOPIC_AUTHORIZATION_FAILED'),
        message:
          'ProduceRequest for out [1] with 398 message(s) failed: Broker: Topic authorization failed: current transaction must be aborted',
      },
      'send-offsets',
    );
    const p = producer();
    assert.equal(await namedCommitFailure(sendOffsets, p, 1_000), refusedDelivery);
    assert.equal(p.flushes, 1, 'the late delivery report was flushed in');
  });

  it('a commit whose records failed delivery (_INCONSISTENT) is named by the refusal', async () => {
    const commit = classifyKafkaError(
      {
        code: code('_INCONSISTENT'),
        message: '1 message(s) failed delivery (see individual delivery reports)',
      },
      'commit-transaction',
    );
    assert.equal(await namedCommitFailure(commit, producer(), 1_000), refusedDelivery);
  });

  it('an error of another kind is reported as it is, without waiting for the reports', async () => {
    const timeout = classifyKafkaError(
      { code: code('_TIMED_OUT'), message: 'timed out' },
      'commit-transaction',
    );
    const p = producer();
    assert.equal(await namedCommitFailure(timeout, p, 1_000), timeout);
    assert.equal(p.flushes, 0);
  });
});
