import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { exited, spawnWorker as spawnChild } from '../../support/spawn-worker.ts';
import { TransactionalWorker } from '../../../src/runtime/index.ts';
import type { Stage } from '../../../src/runtime/stage.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { uniqueTopic, uniqueGroup } from '../../helpers/names.ts';
import { freePort } from '../../helpers/free-port.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { assertExactlyOnce, createTopics, seed, testKafkaOptions } from '../../support/pipeline-harness.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

const children: ChildProcess[] = [];
after(() => {
  for (const c of children) c.kill('SIGKILL');
});

const spawnWorker = (env: Record<string, string>) => spawnChild(env, children);

describe('worker process faults', () => {
  test('a worker killed -9 mid-transaction and restarted with the same id loses and doubles nothing', async () => {
    const input = uniqueTopic('kill-in');
    const output = uniqueTopic('kill-out');
    const group = uniqueGroup('kill');
    await createTopics(bootstrap, [input, output], 3);
    await seed(bootstrap, input, 0, 1_500);
    const env = {
      BOOTSTRAP: bootstrap,
      INPUT: input,
      OUTPUT: output,
      GROUP: group,
      INSTANCE: '0',
      BATCH_SIZE: '100',
    };
    const first = spawnWorker({ ...env, HOLD_AT_COMMIT: '4' });
    await waitFor(() => first.lines.includes('HOLDING'), {
      timeoutMs: 60_000,
      message: 'worker holds an open transaction',
    });
    first.child.kill('SIGKILL');
    await exited(first.child);
    const second = spawnWorker(env);
    await assertExactlyOnce(bootstrap, { input, output, group, expected: 1_500, timeoutMs: 120_000 });
    assert.ok(second.lines.some((l) => l.includes('committed')));
    second.child.kill('SIGTERM');
  });

  test('SIGTERM mid-load: health answers while running, the worker leaves cleanly (exit 0), a restart continues exactly once', async () => {
    const input = uniqueTopic('term-in');
    const output = uniqueTopic('term-out');
    const group = uniqueGroup('term');
    await createTopics(bootstrap, [input, output], 3);
    await seed(bootstrap, input, 0, 3_000);
    const env = {
      BOOTSTRAP: bootstrap,
      INPUT: input,
      OUTPUT: output,
      GROUP: group,
      INSTANCE: '0',
      BATCH_SIZE: '20',
    };
    const first = spawnWorker({ ...env, HEALTH_PORT: String(await freePort()) });
    await waitFor(() => first.lines.some((l) => l.includes('"committed":3')), {
      timeoutMs: 60_000,
      message: 'worker commits',
    });
    const port = Number(first.lines.find((l) => l.startsWith('HEALTH '))?.split(' ')[1]);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    assert.equal(ready.status, 200);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(metrics, /hamstring_worker_transactions_committed_total\{[^}]*\} [1-9]/);
    const stoppedAt = Date.now();
    first.child.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => first.child.once('exit', (c) => r(c)));
    assert.equal(code, 0);
    assert.ok(Date.now() - stoppedAt < 20_000, 'graceful stop is bounded');
    const second = spawnWorker(env);
    await assertExactlyOnce(bootstrap, { input, output, group, expected: 3_000, timeoutMs: 120_000 });
    second.child.kill('SIGTERM');
  });

  for (const version of [1, 2] as const)
    test(`transaction version ${version}: two instances with the same transactional id, the zombie is fenced and stops at once, exactly once holds`, async () => {
      const input = uniqueTopic('zombie-in');
      const output = uniqueTopic('zombie-out');
      const group = uniqueGroup('zombie');
      await createTopics(bootstrap, [input, output], 3);
      await seed(bootstrap, input, 0, 1_000);
      let release!: () => void;
      const released = new Promise<void>((r) => (release = r));
      let holding = false;
      const zombieStage: Stage = {
        name: group,
        inputTopics: [input],
        outputTopics: [output],
        async process(records) {
          if (!holding) {
            holding = true;
            await released;
          }
          return { outputs: records.map((r) => ({ topic: output, key: r.key, value: r.value })) };
        },
      };
      const opts = testKafkaOptions(bootstrap, {
        transactionalId: `${group}-same`,
        transactionVersion: version,
      });
      const zombieRecoveries: string[] = [];
      const zombie = new TransactionalWorker({
        stage: zombieStage,
        instanceId: 'z',
        mode: 'exactly-once',
        kafka: opts,
        batch: { size: 50, timeoutMs: 50 },
        log: silentLogger(),
        keepAliveAfterMs: 1_000,
        hooks: { onRecovery: (r) => zombieRecoveries.push(`${r.situation ?? 'loop'}:${r.kind}:${r.action}`) },
      });
      await zombie.start();
      await waitFor(() => holding, { timeoutMs: 30_000, message: 'zombie holds a batch' });
      const successor = new TransactionalWorker({
        stage: {
          ...zombieStage,
          process: (records) => ({
            outputs: records.map((r) => ({ topic: output, key: r.key, value: r.value })),
          }),
        },
        instanceId: 's',
        mode: 'exactly-once',
        kafka: opts,
        batch: { size: 50, timeoutMs: 50 },
        log: silentLogger(),
      });
      await successor.start();
      await waitFor(() => successor.status().committedTransactions > 0, {
        timeoutMs: 60_000,
        message: 'successor commits',
      });
      release();
      await waitFor(() => zombie.status().state === 'failed', {
        timeoutMs: 60_000,
        message: 'the zombie stops',
      });
      assert.match(zombie.status().failure ?? '', /zombie/);
      assert.equal(zombie.status().live, false);
      // A zombie is fenced where it first meets the coordinator or the group (its offsets, before any
      // commit), so version 2's one new producer after a fence on a commit is not given to it.
      assert.deepEqual(
        zombieRecoveries.filter((r) => r.startsWith('loop:fenced:')),
        ['loop:fenced:stop'],
      );
      // Nor at an abort (a revoked batch): a new producer there would fence the successor in turn.
      assert.deepEqual(
        zombieRecoveries.filter((r) => r.endsWith(':recreate-producer')),
        [],
        zombieRecoveries.join(', '),
      );
      await assertExactlyOnce(bootstrap, { input, output, group, expected: 1_000, timeoutMs: 120_000 });
      assert.equal(successor.status().state, 'running');
      await successor.stop();
      await zombie.stop();
    });
});
