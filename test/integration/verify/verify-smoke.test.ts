import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { projectRoot } from '../../../src/dev/paths.ts';
import { runScenario } from '../../../src/verify/run-scenario.ts';
import { scenarios } from '../../../src/verify/scenarios.ts';
import { longOr } from '../../helpers/long-run.ts';
import { startPrivateKafka } from '../../helpers/private-kafka.ts';

// Its own broker: the scenario SIGSTOPs it, which would stall every file running beside this one.
let kafka: Awaited<ReturnType<typeof startPrivateKafka>> | undefined;
before(async () => {
  kafka = await startPrivateKafka('verify-smoke');
});
after(async () => {
  await kafka?.stop();
});

/**
 * The scenario's own pace (54 s of throttled load for 2 workers) in test:long; the default suite
 * paces the same 5,000 records for 30 s: twice the batch, so each fault's progress gate opens in
 * half the time and the drain after the faults needs half the transactions. Every fault must still
 * come after its gate, i.e. under load (asserted below).
 */
const LOAD_SECONDS = longOr<number | undefined>(30, undefined);

describe('hamstring verify (smoke)', () => {
  test('5,000 records through 2 worker processes survive kill -9 and SIGTERM rounds, 1-in-3 aborts and a 5 s broker SIGSTOP exactly once', async () => {
    const smoke = scenarios.find((s) => s.name === 'smoke')!;
    if (!kafka) throw new Error('no cluster');
    const cluster = kafka.cluster;
    const began = performance.now();
    const report = await runScenario(smoke, {
      bootstrap: cluster.bootstrapServers,
      cluster,
      records: 5_000,
      workers: 2,
      ...(LOAD_SECONDS === undefined ? {} : { loadSeconds: LOAD_SECONDS }),
      workDir: join(projectRoot, 'var', 'verify', 'smoke'),
      drainTimeoutMs: 180_000,
      log: process.env.HAMSTRING_VERIFY_VERBOSE
        ? (l) => process.stderr.write(`${((performance.now() - began) / 1000).toFixed(1)} s ${l}\n`)
        : undefined,
    });
    const summary = JSON.stringify({ ...report, final: undefined, concurrent: undefined });
    assert.equal(report.duplicates, 0, summary);
    assert.equal(report.lost, 0, summary);
    assert.equal(report.reordered, 0, summary);
    assert.equal(report.abortedVisible, 0, summary);
    assert.equal(report.recordsOut, 5_000, summary);
    assert.ok(report.injectedAborts > 0, 'the abort hook aborted some transactions');
    assert.ok(
      (report.workerRecoveries['loop _STATE (abortable) on commit-transaction -> rewind'] ?? 0) > 0,
      `the workers reported the rewinds of the injected aborts: ${JSON.stringify(report.workerRecoveries)}`,
    );
    assert.ok(report.faults.filter((f) => f.kind === 'worker-kill-9').length >= 2, summary);
    assert.ok(report.faults.filter((f) => f.kind === 'worker-sigterm').length >= 2, summary);
    assert.ok(
      report.faults.some((f) => f.kind === 'broker-sigstop'),
      summary,
    );
    const ungated = report.faults.filter((f) => !f.gated);
    assert.deepEqual(ungated, [], `every fault came under load, after its progress gate: ${summary}`);
    assert.deepEqual(report.problems, [], summary);
    assert.ok(report.ok);
  });
});
