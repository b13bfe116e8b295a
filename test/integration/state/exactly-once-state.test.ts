import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import type { TransactionalWorker } from '../../../src/runtime/worker/transactional-worker.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { longOr } from '../../helpers/long-run.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { createTopics, seed, testKafkaOptions } from '../../support/pipeline-harness.ts';
import { exited } from '../../support/spawn-worker.ts';
import { assertSums as checkSums, stateWorkers } from '../../support/state-checks.ts';
import { countingStage } from '../../support/state-stages.ts';

// Kills and membership changes; the aborts, restarts and timers are in state-transactions.test.ts
// (two files, so that the integration runner runs them side by side).

let bootstrap: string;
const root = mkdtempSync(join(tmpdir(), 'hamstring-eos-state-'));
const children: ChildProcess[] = [];
const running: TransactionalWorker[] = [];
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});
after(async () => {
  for (const c of children) c.kill('SIGKILL');
  await Promise.all(running.map((w) => w.stop()));
  rmSync(root, { recursive: true, force: true });
});

/** With `input`, a wrong count also says how many records the input holds (a doubled input or output). */
const assertSums = (output: string, group: string, count: number, input?: string) =>
  checkSums(bootstrap, output, group, count, input);

const worker = stateWorkers(() => bootstrap, root, running);

function spawnCounter(env: Record<string, string>): { child: ChildProcess; commits: () => number } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/state-worker-process.ts'], {
    env: { ...process.env, UV_THREADPOOL_SIZE: '16', HAMSTRING_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let commits = 0;
  createInterface({ input: child.stdout }).on('line', () => (commits += 1));
  return { child, commits: () => commits };
}

/** Each instance killed once by default, twice in test:long. */
const VICTIMS = longOr(['a', 'b'], ['a', 'b', 'a', 'b']);

/**
 * Two counting-stage processes over a flowing input, each killed -9 once or twice at different points of
 * its work and started again; the output and the changelog must end at the input sums.
 *
 * With a commit interval, a transaction commits a few times a second rather than once per batch, so
 * the input is not seeded all along but a step at a time while a victim waits: each victim is killed
 * once it committed part of input it had not seen, whatever the machine's speed.
 */
async function killedMidStream(o: { total: number; commitIntervalMs?: number }): Promise<void> {
  const input = uniqueTopic('sum-in');
  const output = uniqueTopic('sum-out');
  const group = uniqueGroup('sum');
  await createTopics(bootstrap, [input, output], 4);
  const total = o.total;
  const paced = o.commitIntervalMs !== undefined;
  const chunk = 5_000;
  let seeded = 0;
  const seeding = (async () => {
    if (!paced) for (; seeded < total; seeded += chunk) await seed(bootstrap, input, seeded, chunk);
  })();
  const env = {
    BOOTSTRAP: bootstrap,
    INPUT: input,
    OUTPUT: output,
    GROUP: group,
    STATE_DIR: root,
    ...(paced ? { COMMIT_INTERVAL_MS: String(o.commitIntervalMs) } : {}),
  };
  const instances = new Map([
    ['a', spawnCounter({ ...env, INSTANCE: 'a' })],
    ['b', spawnCounter({ ...env, INSTANCE: 'b' })],
  ]);
  for (const [round, name] of VICTIMS.entries()) {
    const victim = instances.get(name)!;
    const before = victim.commits();
    // Killed at a different point of its work each round. Paced, the input grows 1,000 records a
    // second until the victim committed part of it: the other instance may hold every partition
    // while the victim (re)joins, and input seeded at once could be consumed before it owns any.
    await waitFor(
      async () => {
        if (paced ? victim.commits() - before >= 1 + (round % 2) : victim.commits() >= 3 + 4 * round)
          return true;
        if (paced && seeded < total) {
          const n = Math.min(1_000, total - seeded);
          await seed(bootstrap, input, seeded, n);
          seeded += n;
        }
        return false;
      },
      { timeoutMs: 60_000, intervalMs: paced ? 1_000 : 100, message: `instance ${name} commits` },
    );
    victim.child.kill('SIGKILL');
    await exited(victim.child);
    instances.set(name, spawnCounter({ ...env, INSTANCE: name }));
  }
  await seeding;
  if (seeded < total) await seed(bootstrap, input, seeded, total - seeded);
  await assertSums(output, group, total, input);
  for (const { child } of instances.values()) {
    child.kill('SIGTERM');
    await exited(child);
  }
}

describe('exactly-once state stores on a real broker', () => {
  // Two kills on 10,000 records by default; four on 50,000 in test:long. The kills come at the
  // victims' 3rd and 7th commits (batches of 200): the records after them add no proof.
  test('a counting stage whose instances are killed -9 in turn mid-stream ends at exactly the input sums', () =>
    killedMidStream({ total: longOr(10_000, 50_000) }));

  test('with a commit interval (100 ms), instances killed -9 in turn mid-stream: exactly the input sums', () =>
    killedMidStream({ total: longOr(10_000, 20_000), commitIntervalMs: 100 }));

  for (const [protocol, kafka] of [
    ['cooperative-sticky', {}],
    ['eager (range)', { assignmentStrategy: 'range' }],
    ['KIP-848', { groupProtocol: 'consumer' }],
  ] as const)
    test(`${protocol}: two, then three, then one instance while the input flows; partitions move with their state`, async () => {
      const over = { kafka: testKafkaOptions(bootstrap, kafka) };
      const input = uniqueTopic('move-in');
      const output = uniqueTopic('move-out');
      const group = uniqueGroup('move');
      await createTopics(bootstrap, [input, output], 6);
      // Half before the third instance joins (its 10 commits take at most 2,000), half after.
      const total = 10_000;
      const extra = 1_200;
      await seed(bootstrap, input, 0, total / 2);
      const committed = (ws: TransactionalWorker[]) =>
        ws.reduce((n, w) => n + w.status().committedTransactions, 0);
      const two = [
        worker(countingStage(input, output, group), 'm1', over),
        worker(countingStage(input, output, group), 'm2', over),
      ];
      await Promise.all(two.map((w) => w.start()));
      await waitFor(() => committed(two) >= 10, { timeoutMs: 60_000, message: 'two instances commit' });
      const third = worker(countingStage(input, output, group), 'm3', over);
      await third.start();
      await waitFor(() => third.status().assigned.length > 0, {
        timeoutMs: 60_000,
        message: 'the third instance is assigned partitions',
      });
      // The rest of the input reaches partitions that moved, with the counts they had so far.
      await seed(bootstrap, input, total / 2, total / 2);
      await Promise.all(two.map((w) => w.stop()));
      // The two may have drained the input before leaving, and the last learns of its new partitions
      // only at its next rebalance (KIP-848: its next heartbeat, seconds later): so wait for it to hold
      // them all, then give it input on each, counted on from what the two left in the changelog.
      await waitFor(() => third.status().assigned.length === 6, {
        timeoutMs: 60_000,
        message: 'the last instance holds every partition',
        observe: () => third.status().assigned.length,
      });
      await seed(bootstrap, input, total, extra);
      await assertSums(output, group, total + extra, input);
      await third.stop();
    });
});
