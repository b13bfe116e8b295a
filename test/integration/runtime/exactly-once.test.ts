import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { uniqueTopic, uniqueGroup } from '../../helpers/names.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import {
  passThroughWorker,
  stoppedAfterSuite,
  type PassThroughWorkerOptions,
} from '../../support/pass-through-worker.ts';
import { assertExactlyOnce, createTopics, seed } from '../../support/pipeline-harness.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

function worker(
  input: string,
  output: string,
  group: string,
  instance: string,
  over: PassThroughWorkerOptions['kafka'] = {},
  mode: 'exactly-once' | 'at-least-once' = 'exactly-once',
) {
  return passThroughWorker(bootstrap, { input, output, group, instance, batchSize: 100, kafka: over, mode });
}

describe('transactional worker on a real broker', () => {
  const running = stoppedAfterSuite();

  test('copies every input record exactly once, in order per key, and commits offset = last consumed + 1', async () => {
    const input = uniqueTopic('eo-in');
    const output = uniqueTopic('eo-out');
    const group = uniqueGroup('eo');
    await createTopics(bootstrap, [input, output], 3);
    await seed(bootstrap, input, 0, 2_000);
    const w = worker(input, output, group, '0');
    running.push(w);
    await w.start();
    await assertExactlyOnce(bootstrap, { input, output, group, expected: 2_000 });
    assert.ok(w.status().committedTransactions > 0);
    assert.equal(w.status().ready, true);
  });

  test('with the KIP-848 consumer protocol two members share the work exactly once', async () => {
    const input = uniqueTopic('848-in');
    const output = uniqueTopic('848-out');
    const group = uniqueGroup('848');
    await createTopics(bootstrap, [input, output], 4);
    await seed(bootstrap, input, 0, 1_000);
    const a = worker(input, output, group, 'a', { groupProtocol: 'consumer' });
    running.push(a);
    await a.start();
    await waitFor(() => a.status().committedTransactions > 0, {
      timeoutMs: 30_000,
      message: 'first member commits',
    });
    const b = worker(input, output, group, 'b', { groupProtocol: 'consumer' });
    running.push(b);
    await b.start();
    await waitFor(() => b.status().assigned.length > 0, {
      timeoutMs: 30_000,
      message: 'second member gets partitions',
    });
    // Seeded once b holds partitions, so part of it is b's to process (seeded earlier, a could finish
    // it all before the assignment moved).
    await seed(bootstrap, input, 1_000, 2_000);
    const aCommitsWhenShared = a.status().committedTransactions;
    await assertExactlyOnce(bootstrap, { input, output, group, expected: 3_000 });
    // Sharing means both members hold partitions and both commit work after the second one joined.
    assert.ok(a.status().assigned.length > 0, `a keeps partitions: ${a.status().assigned.join(',')}`);
    assert.ok(b.status().committedTransactions > 0, 'b commits its share');
    assert.ok(a.status().committedTransactions > aCommitsWhenShared, 'a commits after b joined');
  });

  test('at-least-once mode (sinks) produces, then commits, with no loss', async () => {
    const input = uniqueTopic('alo-in');
    const output = uniqueTopic('alo-out');
    const group = uniqueGroup('alo');
    await createTopics(bootstrap, [input, output], 3);
    await seed(bootstrap, input, 0, 1_000);
    const w = worker(input, output, group, '0', {}, 'at-least-once');
    running.push(w);
    await w.start();
    await assertExactlyOnce(bootstrap, { input, output, group, expected: 1_000 });
  });
});
