import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { code } from '../../../src/kafka/error-codes.ts';
import type { WorkerOptions } from '../../../src/runtime/index.ts';
import { fakeWorker } from '../../support/fake-worker.ts';
import { raw } from '../../support/worker-fakes.ts';
import { waitFor } from '../../helpers/wait-for.ts';

const NAMES = { stage: 'span.copy', input: 'span-in', output: 'span-out' };

function setUp(records: number, commitInterval: WorkerOptions['commitInterval']) {
  return fakeWorker(NAMES, records, commitInterval ? { commitInterval } : {});
}

const values = (records: { value?: Buffer | string | null }[]) => records.map((r) => String(r.value));

describe('a commit interval: one transaction spans several batches', () => {
  it('keeps the transaction open until it holds commit_max_records, then commits every batch in it once', async () => {
    const { kafka, worker } = setUp(40, { maxRecords: 25 });
    await worker.start({ loop: false });
    await worker.step();
    await worker.step();
    assert.equal(kafka.topic.committed, 0, 'two batches of 10: below 25, nothing committed');
    await worker.step();
    await worker.step(); // the fourth batch is fetched while the third's commit completes
    assert.equal(kafka.topic.committed, 30);
    assert.equal(worker.status().committedTransactions, 1);
    assert.deepEqual(
      values(kafka.producers[0]!.committedOutputs),
      Array.from({ length: 30 }, (_, i) => `v${i}`),
    );
    await worker.stop();
  });

  it('commits once the first batch is commit_interval_ms old', async () => {
    const { kafka, clock, worker } = setUp(40, { maxMs: 100 });
    await worker.start({ loop: false });
    await worker.step();
    clock.advance(99);
    await worker.step();
    await worker.step();
    assert.equal(kafka.topic.committed, 0, '99 ms: still open');
    clock.advance(1);
    await worker.step();
    await worker.step();
    assert.equal(kafka.topic.committed, 40);
    assert.equal(worker.status().committedTransactions, 1);
    await worker.stop();
  });

  it('commits at once when the input runs dry instead of waiting out the interval', async () => {
    const { kafka, worker } = setUp(5, { maxMs: 60_000 });
    await worker.start({ loop: false });
    await worker.step();
    assert.equal(kafka.topic.committed, 0);
    await worker.step(); // nothing more to consume
    await worker.step();
    assert.equal(kafka.topic.committed, 5);
    await worker.stop();
  });

  it('commits as soon as a batch comes back short of full: the input is caught up, full batches keep spanning', async () => {
    const { kafka, worker } = setUp(25, { maxMs: 60_000 });
    await worker.start({ loop: false });
    await worker.step();
    await worker.step();
    assert.equal(worker.status().committedTransactions, 0, 'two full batches of 10: the span stays open');
    await worker.step(); // five records: short of a full batch
    // No further step, no empty fetch, no clock movement: the commit runs on by itself.
    await waitFor(() => kafka.topic.committed === 25, { timeoutMs: 5_000, message: 'the span commits' });
    assert.equal(worker.status().committedTransactions, 1, 'all three batches in one transaction');
    await worker.stop();
  });

  it('commits as soon as a full batch leaves the input at its end: a rate that fills batches exactly is caught up too', async () => {
    const { kafka, clock, worker } = setUp(20, { maxMs: 60_000 });
    await worker.start({ loop: false });
    await worker.step();
    assert.equal(worker.status().committedTransactions, 0, 'ten more records wait: the span stays open');
    clock.advance(10); // one batch timeout since the first batch asked
    await worker.step(); // a full batch of ten, the last records there are
    await waitFor(() => kafka.topic.committed === 20, { timeoutMs: 5_000, message: 'the span commits' });
    assert.equal(worker.status().committedTransactions, 1);
    await worker.stop();
  });

  it('asks whether a full batch ended the input at most once per batch timeout; the next, short fetch commits instead', async () => {
    const { kafka, worker } = setUp(20, { maxMs: 60_000 });
    await worker.start({ loop: false });
    await worker.step(); // full, asked: ten more wait
    await worker.step(); // full and the input's end, but asked within the same batch timeout
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(kafka.topic.committed, 0, 'not asked again so soon: the span stays open');
    await worker.step(); // nothing more: the empty fetch ends the span
    await waitFor(() => kafka.topic.committed === 20, { timeoutMs: 5_000, message: 'the span commits' });
    assert.equal(worker.status().committedTransactions, 1, 'both batches in one transaction');
    await worker.stop();
  });

  it('a failed commit aborts the whole span and its batches are consumed again: no loss, no duplicate', async () => {
    const { kafka, worker } = setUp(20, { maxRecords: 20 });
    kafka.nextProducerFaults.push({ commitTransaction: raw(code('_FAIL'), 'commit exploded') });
    await worker.start({ loop: false });
    for (let i = 0; i < 8; i += 1) await worker.step();
    assert.equal(kafka.producers[0]!.faults.commitTransaction, undefined, 'the commit did fail once');
    assert.ok(worker.status().committedTransactions >= 1);
    assert.equal(kafka.topic.committed, 20);
    assert.deepEqual(
      values(kafka.producers.flatMap((p) => p.committedOutputs)),
      Array.from({ length: 20 }, (_, i) => `v${i}`),
    );
    await worker.stop();
  });

  it('sends the offsets and commits while the next batch is fetched, not before', async () => {
    const { kafka, worker } = setUp(20, { maxRecords: 10 });
    await worker.start({ loop: false });
    const producer = kafka.producers[0]!;
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const sendOffsets = producer.sendOffsets.bind(producer);
    let offsetsSent = false;
    producer.sendOffsets = async (offsets) => {
      offsetsSent = true;
      await gate;
      return sendOffsets(offsets);
    };
    let stepped = false;
    void worker.step().then(() => (stepped = true));
    // A step that waited for its offsets would never return: the gate opens only after it did.
    await waitFor(() => stepped, {
      timeoutMs: 5_000,
      message: 'the step that made the span due returned with its offsets still on the way',
    });
    assert.equal(offsetsSent, true, 'the step did start sending the offsets');
    assert.equal(kafka.topic.committed, 0);
    open();
    await worker.step();
    assert.ok(kafka.topic.committed >= 10, 'the next step waited for that commit');
    await worker.stop();
  });

  it('offsets that fail to send abort the span, whose batches are consumed again: no loss, no duplicate', async () => {
    const { kafka, worker } = setUp(20, { maxRecords: 10 });
    kafka.nextProducerFaults.push({ sendOffsets: raw(code('_FAIL'), 'offsets exploded') });
    await worker.start({ loop: false });
    for (let i = 0; i < 8; i += 1) await worker.step();
    assert.equal(kafka.producers[0]!.faults.sendOffsets, undefined, 'sending the offsets did fail once');
    assert.equal(kafka.topic.committed, 20);
    assert.deepEqual(
      values(kafka.producers.flatMap((p) => p.committedOutputs)),
      Array.from({ length: 20 }, (_, i) => `v${i}`),
    );
    await worker.stop();
  });

  it('a clean stop commits the open span rather than discarding its work', async () => {
    const { kafka, worker } = setUp(10, { maxMs: 60_000 });
    await worker.start({ loop: false });
    await worker.step();
    assert.equal(kafka.topic.committed, 0);
    await worker.stop();
    assert.equal(kafka.topic.committed, 10);
    assert.equal(kafka.producers[0]!.committedOutputs.length, 10);
  });

  it('without an interval, each batch is its own transaction (the default is unchanged)', async () => {
    const { kafka, worker } = setUp(20, undefined);
    await worker.start({ loop: false });
    await worker.step();
    assert.equal(kafka.topic.committed, 10);
    await worker.step();
    assert.equal(worker.status().committedTransactions, 2);
    await worker.stop();
  });
});
