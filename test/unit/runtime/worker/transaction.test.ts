import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { code } from '../../../../src/kafka/error-codes.ts';
import type { OutgoingRecord, TopicPartitionOffset } from '../../../../src/kafka/records.ts';
import {
  IllegalTransactionCall,
  TRANSACTION_CALLS,
  TRANSACTION_STATES,
  TRANSACTION_TABLE,
  Transaction,
  type TransactionCall,
  type TransactionSession,
  type TransactionState,
} from '../../../../src/runtime/worker/transaction.ts';
import { silentLogger } from '../../../../src/observability/logger.ts';
import { systemClock } from '../../../../src/runtime/clock.ts';
import { KafkaSession, RetriesExhausted, type SessionDeps } from '../../../../src/runtime/kafka-session.ts';
import { raw } from '../../../support/worker-fakes.ts';

/**
 * A producer that records the native calls it gets. `failNext` makes the named call throw once;
 * `holdNext` keeps the named call pending until `release()`, so the state it passes through stays.
 */
function fakeSession() {
  const calls: string[] = [];
  const failNext = new Set<string>();
  const holdNext = new Set<string>();
  const held: (() => void)[] = [];
  const native = (name: string) => async () => {
    calls.push(name);
    if (holdNext.delete(name)) await new Promise<void>((resolve) => held.push(resolve));
    if (failNext.delete(name)) throw raw(code('_FAIL'), `${name} failed`);
  };
  const producer = {
    beginTransaction: native('beginTransaction'),
    produce: (r: OutgoingRecord) => native(`produce:${String(r.value)}`)(),
    sendOffsets: native('sendOffsets'),
    commitTransaction: native('commitTransaction'),
    abortTransaction: native('abortTransaction'),
    whenIdle: () => Promise.resolve(true),
  };
  const session = {
    producer,
    consumer: { groupMetadata: () => undefined },
    // In-place retries are the session's business: one attempt here.
    retryInPlace: <T>(_op: string, fn: () => Promise<T>) => fn(),
  } as unknown as TransactionSession;
  const release = () => {
    for (const r of held.splice(0)) r();
  };
  return { session, calls, failNext, holdNext, release };
}

const OFFSETS: TopicPartitionOffset[] = [{ topic: 't', partition: 0, offset: 1 }];
const RECORD: OutgoingRecord = { topic: 'out', value: 'v' };

/** Each call as the runtime makes it. */
function invoke(txn: Transaction, call: TransactionCall): Promise<void> | void {
  switch (call) {
    case 'producer-ready':
      return txn.producerReady();
    case 'begin':
      return txn.begin();
    case 'produce':
      return txn.produce(RECORD);
    case 'send-offsets':
      return txn.sendOffsets(OFFSETS);
    case 'commit':
      return txn.commit();
    case 'abort':
      return txn.abort();
    case 'abandon':
      return txn.abandon();
  }
}

/** Starts a call and leaves it pending (held by the fake): its `during` state stays. */
function pending(p: Promise<void>): void {
  p.catch(() => undefined);
}

/**
 * A transaction in `state`, reached through legal calls only. The states a call passes through
 * (beginning, sending-offsets, committing, aborting) are reached by holding that call open.
 */
async function inState(state: TransactionState) {
  const f = fakeSession();
  const txn = new Transaction(f.session, 1_000);
  const at = { txn, ...f };
  if (state === 'uninitialised') return at;
  txn.producerReady();
  if (state === 'ready') return at;
  if (state === 'beginning') {
    f.holdNext.add('beginTransaction');
    pending(txn.begin());
    return at;
  }
  await txn.begin();
  if (state === 'open') return at;
  if (state === 'sending-offsets') {
    f.holdNext.add('sendOffsets');
    pending(txn.sendOffsets(OFFSETS));
    return at;
  }
  if (state === 'committing') {
    f.holdNext.add('commitTransaction');
    pending(txn.commit());
    return at;
  }
  f.failNext.add('sendOffsets');
  await assert.rejects(txn.sendOffsets(OFFSETS));
  if (state === 'failed') return at;
  assert.equal(state, 'aborting');
  f.holdNext.add('abortTransaction');
  pending(txn.abort());
  return at;
}

describe('the transaction table', () => {
  it('lists every state and only known calls', () => {
    assert.deepEqual(Object.keys(TRANSACTION_TABLE).sort(), [...TRANSACTION_STATES].sort());
    for (const row of Object.values(TRANSACTION_TABLE))
      for (const call of Object.keys(row)) assert.ok(TRANSACTION_CALLS.includes(call as TransactionCall));
  });

  it('reaches every state it lists', async () => {
    for (const state of TRANSACTION_STATES) assert.equal((await inState(state)).txn.state, state);
  });
});

describe('illegal transaction calls throw before anything reaches Kafka', () => {
  for (const state of TRANSACTION_STATES)
    for (const call of TRANSACTION_CALLS) {
      if (TRANSACTION_TABLE[state][call] !== undefined) continue;
      it(`${call} in state ${state}`, async () => {
        const { txn, calls } = await inState(state);
        const before = calls.length;
        const thrown = await (async () => {
          try {
            await invoke(txn, call);
          } catch (e) {
            return e;
          }
          return undefined;
        })();
        assert.ok(
          thrown instanceof IllegalTransactionCall,
          `expected IllegalTransactionCall, got ${String(thrown)}`,
        );
        assert.equal(thrown.state, state);
        assert.equal(thrown.call, call);
        assert.match(thrown.message, new RegExp(`${call} is illegal in state ${state}`));
        assert.equal(txn.state, state, 'the state is unchanged');
        assert.equal(calls.length, before, 'no native call was made');
      });
    }
});

describe('legal transaction calls', () => {
  for (const state of TRANSACTION_STATES)
    for (const call of TRANSACTION_CALLS) {
      const t = TRANSACTION_TABLE[state][call];
      if (t === undefined) continue;
      it(`${call} in state ${state} ends in ${t.then}`, async () => {
        const { txn } = await inState(state);
        await invoke(txn, call);
        assert.equal(txn.state, t.then);
      });
    }
});

describe('legal sequences', () => {
  it('begin, produce, send offsets, commit: the native calls in order, ready again', async () => {
    const f = fakeSession();
    const txn = new Transaction(f.session, 1_000);
    txn.producerReady();
    await txn.begin();
    assert.equal(txn.open, true);
    await txn.produce(RECORD);
    await txn.sendOffsets(OFFSETS);
    const committing = txn.commit();
    assert.equal(txn.state, 'committing');
    assert.equal(txn.open, true, 'a commit under way is still open for a recovery');
    await committing;
    assert.equal(txn.state, 'ready');
    assert.equal(txn.open, false);
    assert.deepEqual(f.calls, ['beginTransaction', 'produce:v', 'sendOffsets', 'commitTransaction']);
  });

  it('a span: several batches produce into one transaction before it commits', async () => {
    const f = fakeSession();
    const txn = new Transaction(f.session, 1_000);
    txn.producerReady();
    await txn.begin();
    for (let i = 0; i < 3; i += 1) await txn.produce({ topic: 'out', value: `v${i}` });
    await txn.sendOffsets(OFFSETS);
    await txn.commit();
    await txn.begin();
    assert.equal(txn.state, 'open', 'the next transaction begins');
  });

  it('a failed commit leaves the transaction failed and open; only an abort or abandon ends it', async () => {
    const f = fakeSession();
    const txn = new Transaction(f.session, 1_000);
    txn.producerReady();
    await txn.begin();
    f.failNext.add('commitTransaction');
    await assert.rejects(txn.commit(), /commitTransaction failed/);
    assert.equal(txn.state, 'failed');
    assert.equal(txn.open, true);
    await assert.rejects(txn.produce(RECORD), IllegalTransactionCall);
    await assert.rejects(txn.commit(), IllegalTransactionCall);
    await txn.abort();
    assert.equal(txn.state, 'ready');
    assert.deepEqual(f.calls.slice(-2), ['commitTransaction', 'abortTransaction']);
  });

  it('a refused produce fails the transaction; the abort discards it', async () => {
    const f = fakeSession();
    const txn = new Transaction(f.session, 1_000);
    txn.producerReady();
    await txn.begin();
    f.failNext.add('produce:v');
    await assert.rejects(txn.produce(RECORD));
    assert.equal(txn.state, 'failed');
    await txn.abort();
    assert.equal(txn.state, 'ready');
  });

  it('a failed begin leaves it ready: nothing to abort', async () => {
    const f = fakeSession();
    const txn = new Transaction(f.session, 1_000);
    txn.producerReady();
    f.failNext.add('beginTransaction');
    await assert.rejects(txn.begin());
    assert.equal(txn.state, 'ready');
    assert.equal(txn.open, false);
  });

  it('a failed abort leaves no usable transaction until a new producer is ready', async () => {
    const f = fakeSession();
    const txn = new Transaction(f.session, 1_000);
    txn.producerReady();
    await txn.begin();
    f.failNext.add('abortTransaction');
    await assert.rejects(txn.abort());
    assert.equal(txn.state, 'uninitialised');
    assert.equal(txn.open, false);
    await assert.rejects(txn.begin(), IllegalTransactionCall);
    txn.abandon();
    txn.producerReady();
    await txn.begin();
    assert.equal(txn.state, 'open');
  });

  it('a reconnect abandons the open transaction without a native abort', async () => {
    const f = fakeSession();
    const txn = new Transaction(f.session, 1_000);
    txn.producerReady();
    await txn.begin();
    await txn.produce(RECORD);
    txn.abandon();
    assert.equal(txn.state, 'uninitialised');
    assert.equal(txn.open, false);
    assert.ok(!f.calls.includes('abortTransaction'));
    txn.producerReady();
    await txn.begin();
    assert.equal(txn.state, 'open');
  });

  it('a commit under way when the producer is abandoned ends without reviving the transaction', async () => {
    const f = fakeSession();
    const txn = new Transaction(f.session, 1_000);
    txn.producerReady();
    await txn.begin();
    f.holdNext.add('commitTransaction');
    const committing = txn.commit();
    txn.abandon();
    f.release();
    await committing;
    assert.equal(txn.state, 'uninitialised');
  });
});

describe('Transaction: an abort while librdkafka still runs a timed-out commit', () => {
  it('gives up at the first _CONFLICT instead of retrying it in place until the API timeout', async () => {
    // The real in-place retries (KafkaSession), a 2 s API timeout, an abort that always conflicts:
    // the old code retried for the whole 2 s, away from the consumer, before its failure plan ran.
    const session = new KafkaSession({
      kafka: { apiTimeoutMs: 2_000 },
      clock: systemClock,
      log: silentLogger(),
      isStopping: () => false,
    } as unknown as SessionDeps);
    let aborts = 0;
    const producer = {
      beginTransaction: () => Promise.resolve(),
      abortTransaction: () => {
        aborts += 1;
        return Promise.reject(
          raw(code('_CONFLICT'), 'Conflicting commit_transaction API call is already in progress'),
        );
      },
      whenIdle: () => Promise.resolve(true),
    };
    const txn = new Transaction(
      {
        producer,
        consumer: { groupMetadata: () => undefined },
        retryInPlace: session.retryInPlace.bind(session),
      } as unknown as TransactionSession,
      2_000,
    );
    txn.producerReady();
    await txn.begin();
    const began = Date.now();
    await assert.rejects(txn.abort(), (e: unknown) => {
      assert.ok(e instanceof RetriesExhausted);
      assert.equal(e.cause.code, code('_CONFLICT'));
      return true;
    });
    assert.equal(aborts, 1);
    assert.ok(Date.now() - began < 500, `gave up after ${Date.now() - began} ms`);
    assert.equal(txn.state, 'uninitialised');
  });

  it('still retries other retriable abort errors in place', async () => {
    const session = new KafkaSession({
      kafka: { apiTimeoutMs: 2_000 },
      clock: systemClock,
      log: silentLogger(),
      isStopping: () => false,
    } as unknown as SessionDeps);
    let aborts = 0;
    const producer = {
      beginTransaction: () => Promise.resolve(),
      abortTransaction: () => {
        aborts += 1;
        return aborts < 3
          ? Promise.reject(raw(code('_TIMED_OUT'), 'timed out', { isRetriable: true }))
          : Promise.resolve();
      },
      whenIdle: () => Promise.resolve(true),
    };
    const txn = new Transaction(
      {
        producer,
        consumer: { groupMetadata: () => undefined },
        retryInPlace: session.retryInPlace.bind(session),
      } as unknown as TransactionSession,
      2_000,
    );
    txn.producerReady();
    await txn.begin();
    await txn.abort();
    assert.equal(aborts, 3);
    assert.equal(txn.state, 'ready');
  });
});
