import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { startPrivateKafka } from '../../helpers/private-kafka.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { createTopics, seed } from '../../support/pipeline-harness.ts';

let kafka: Awaited<ReturnType<typeof startPrivateKafka>>;
before(async () => {
  // Its own broker: pausing the run-wide one would fail the files that run next to this one.
  kafka = await startPrivateKafka('abandon');
});
after(async () => {
  await kafka?.stop();
});

describe('a worker process that abandoned a producer', () => {
  test('exits with code 0 within seconds of SIGTERM once the abandoned call came back', async () => {
    const [input, output, group] = [uniqueTopic('ab-in'), uniqueTopic('ab-out'), uniqueGroup('ab')];
    await createTopics(kafka.bootstrap, [input, output], 2);
    await seed(kafka.bootstrap, input, 0, 20_000);
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/worker-process.ts'], {
      env: {
        ...process.env,
        UV_THREADPOOL_SIZE: '16',
        HAMSTRING_LOG_LEVEL: 'info',
        BOOTSTRAP: kafka.bootstrap,
        INPUT: input,
        OUTPUT: output,
        GROUP: group,
        BATCH_SIZE: '5',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let commits = 0;
    createInterface({ input: child.stdout }).on('line', (l) => {
      if (l.startsWith('{"committed"')) commits += 1;
    });
    const log: string[] = [];
    createInterface({ input: child.stderr }).on('line', (l) => log.push(l));
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const abandoned = () => log.some((l) => l.includes('abandoning a producer'));
    try {
      await waitFor(() => commits > 20, { timeoutMs: 60_000, message: 'commits under load' });
      const [id] = kafka.cluster.nodeIds();
      // Longer than the API timeout and its guard (10 s + 2 s): the pending transactional call is
      // given up and its producer abandoned (after the abort's own retries in place, which fail
      // with _CONFLICT while that call is pending); it comes back once the broker runs again.
      kafka.cluster.pauseNode(id!);
      await waitFor(abandoned, { timeoutMs: 90_000, message: 'a producer abandoned' });
      kafka.cluster.resumeNode(id!);
      const resumedAt = commits;
      await waitFor(() => commits > resumedAt + 5, {
        timeoutMs: 90_000,
        message: 'commits after the resume',
      });
    } catch (e) {
      child.kill('SIGKILL');
      throw new Error(`${String(e)}\n${log.slice(-30).join('\n')}`);
    }
    const t0 = Date.now();
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const { code, signal } = await exit;
    clearTimeout(killer);
    const stopMs = Date.now() - t0;
    assert.equal(signal, null, `not killed (stopped after ${stopMs} ms)\n${log.slice(-20).join('\n')}`);
    assert.equal(code, 0);
    assert.ok(stopMs < 5_000, `exited ${stopMs} ms after SIGTERM`);
    assert.ok(
      log.some((l) => l.includes('native call returned')),
      'the abandoned call came back and its producer was disconnected',
    );
  });
});
