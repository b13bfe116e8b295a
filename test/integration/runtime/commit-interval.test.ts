import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultClients } from '../../../src/runtime/kafka-session.ts';
import { uniqueTopic, uniqueGroup } from '../../helpers/names.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { FaultInjector, type FaultRule } from '../../support/fault-injection.ts';
import { passThroughWorker, stoppedAfterSuite } from '../../support/pass-through-worker.ts';
import { assertExactlyOnce, createTopics, seed, testProducer } from '../../support/pipeline-harness.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

/** A worker whose transactions span the batches of 200 ms (or 400 input records). */
function spanning(input: string, output: string, group: string, instance: string, rules: FaultRule[] = []) {
  const faults = new FaultInjector(rules);
  const worker = passThroughWorker(bootstrap, {
    input,
    output,
    group,
    instance,
    batchSize: 50,
    kafka: { apiTimeoutMs: 3_000 },
    commitInterval: { maxMs: 200, maxRecords: 400 },
    clients: faults.wrap(defaultClients),
  });
  return { worker, faults };
}

describe('a commit interval on a real broker: transactions spanning several batches', () => {
  const running = stoppedAfterSuite();

  test('spans several batches per transaction and still copies every record exactly once', async () => {
    const input = uniqueTopic('span-in');
    const output = uniqueTopic('span-out');
    const group = uniqueGroup('span');
    await createTopics(bootstrap, [input, output], 3);
    await seed(bootstrap, input, 0, 2_000);
    const { worker } = spanning(input, output, group, '0');
    running.push(worker);
    await worker.start();
    await assertExactlyOnce(bootstrap, { input, output, group, expected: 2_000 });
    const txns = worker.status().committedTransactions;
    assert.ok(txns > 0 && txns < 2_000 / 50, `fewer transactions (${txns}) than batches of 50`);
  });

  test('a steady trickle that never leaves a fetch empty commits as it goes: caught up, the stage does not wait out a 60 s interval', async () => {
    const input = uniqueTopic('span-trickle-in');
    const output = uniqueTopic('span-trickle-out');
    const group = uniqueGroup('span-trickle');
    await createTopics(bootstrap, [input, output], 1);
    // Each consume waits up to 1 s for 500 records and finds the ~50 a 20 ms trickle brings: never
    // empty (the input never runs dry), never full. Only a caught-up commit ends a transaction here.
    const worker = passThroughWorker(bootstrap, {
      input,
      output,
      group,
      instance: '0',
      batchSize: 500,
      batchTimeoutMs: 1_000,
      commitInterval: { maxMs: 60_000 },
    });
    running.push(worker);
    await worker.start();
    const p = testProducer(bootstrap, 'trickle');
    await p.connect(30_000);
    const total = 250;
    let committedWhileTrickling = 0;
    for (let i = 0; i < total; i += 1) {
      await p.produce({ topic: input, key: `k-${i % 64}`, value: String(i) });
      await p.flush(10_000);
      if (i === total - 1) committedWhileTrickling = worker.status().committedTransactions;
      await new Promise((r) => setTimeout(r, 20));
    }
    await p.close(10_000);
    assert.ok(
      committedWhileTrickling >= 2,
      `transactions committed before the trickle ended: ${committedWhileTrickling} (the interval alone: none for 60 s)`,
    );
    await assertExactlyOnce(bootstrap, { input, output, group, expected: total });
  });

  test('members joining and leaving while transactions are open: the open spans abort or commit, nothing lost or doubled', async () => {
    const input = uniqueTopic('span-join-in');
    const output = uniqueTopic('span-join-out');
    const group = uniqueGroup('span-join');
    await createTopics(bootstrap, [input, output], 4);
    await seed(bootstrap, input, 0, 1_000);
    const a = spanning(input, output, group, 'a').worker;
    running.push(a);
    await a.start();
    await waitFor(() => a.status().committedTransactions > 0, { timeoutMs: 30_000, message: 'a commits' });
    const b = spanning(input, output, group, 'b').worker;
    running.push(b);
    await b.start();
    await seed(bootstrap, input, 1_000, 2_000);
    await waitFor(() => b.status().assigned.length > 0, { timeoutMs: 30_000, message: 'b gets partitions' });
    await b.stop();
    running.splice(running.indexOf(b), 1);
    await seed(bootstrap, input, 3_000, 1_000);
    await assertExactlyOnce(bootstrap, { input, output, group, expected: 4_000 });
  });

  test('an abortable send-offsets error aborts the whole span; its batches are consumed again exactly once', async () => {
    const input = uniqueTopic('span-fault-in');
    const output = uniqueTopic('span-fault-out');
    const group = uniqueGroup('span-fault');
    await createTopics(bootstrap, [input, output], 3);
    await seed(bootstrap, input, 0, 1_200);
    const { worker, faults } = spanning(input, output, group, '0', [
      { operation: 'send-offsets', nth: 2, error: 'ILLEGAL_GENERATION', flags: { isTxnRequiresAbort: true } },
    ]);
    running.push(worker);
    await worker.start();
    await assertExactlyOnce(bootstrap, { input, output, group, expected: 1_200 });
    assert.equal(faults.injected.length, 1, 'the fault was injected');
    const aborts = await worker.metrics.aborts.get();
    assert.ok(
      aborts.values.some((v) => v.value >= 1),
      'the span was aborted',
    );
  });
});
