import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LocalKafkaCluster } from '../../../src/dev/kafka-cluster.ts';
import { NetworkNamespace } from '../../../src/dev/network-namespace.ts';
import { projectRoot } from '../../../src/dev/paths.ts';
import { runScenario } from '../../../src/verify/run-scenario.ts';
import type { Scenario } from '../../../src/verify/scenario.ts';
import { longOr } from '../../helpers/long-run.ts';
import { holdFault } from '../../../src/verify/schedule.ts';

/**
 * Its own cluster: the run-wide one has no listener for the namespace. Its ports sit below Linux's
 * ephemeral range (32768-60999): at 49092, a client connection's local port once held the broker's
 * port when the cluster started.
 */
const DATA_DIR = join(projectRoot, 'var', 'test', 'kafka-netns');
const BASE_PORT = 24092;
const unavailable = NetworkNamespace.unavailableReason();

/**
 * The network-cut scenario with shorter cuts. By default one cut past both the session timeout (6 s)
 * and the API timeout (10 s); in test:long one past the session timeout only, then one past both.
 */
const CUTS_S = longOr([12], [4, 20]);
const shortCuts: Scenario = {
  name: 'network-cut-short',
  description: `cut the workers off the broker for ${CUTS_S.join(' s, then for ')} s`,
  needs: 'local-1',
  workersInNamespace: true,
  abortRatio: 1 / 3,
  loadSeconds: () => longOr(25, 40),
  run: async (ctx) => {
    for (const s of CUTS_S) {
      await ctx.fault('network-cut', `workers <-> broker ${s} s`, () =>
        holdFault(
          s * 1000,
          () => ctx.network!.cut(),
          () => ctx.network!.heal(),
        ),
      );
    }
  },
};

describe('hamstring verify: network cut between workers and broker', { skip: unavailable }, () => {
  let namespace: NetworkNamespace;
  let cluster: LocalKafkaCluster;
  before(async () => {
    await LocalKafkaCluster.attach(DATA_DIR)?.stop();
    rmSync(DATA_DIR, { recursive: true, force: true });
    namespace = NetworkNamespace.create(BASE_PORT);
    cluster = await LocalKafkaCluster.start({
      nodes: 1,
      dataDir: DATA_DIR,
      basePort: BASE_PORT,
      namespaceListenerHost: namespace.hostAddress,
    });
  });
  after(async () => {
    namespace?.remove();
    await cluster?.stop();
    rmSync(DATA_DIR, { recursive: true, force: true });
  });

  const workDir = join(projectRoot, 'var', 'verify', 'network-cut-test');
  test(`2,000 records through 2 workers in a network namespace survive ${CUTS_S.join(' s and ')} s cuts, with 1-in-3 aborts, exactly once`, async () => {
    const report = await runScenario(shortCuts, {
      bootstrap: cluster.bootstrapServers,
      cluster,
      records: 2_000,
      workers: 2,
      workDir,
      drainTimeoutMs: 180_000,
      namespace: {
        bootstrap: cluster.namespaceBootstrap(namespace.hostAddress),
        execPrefix: namespace.execPrefix(),
        cut: () => namespace.cut(),
        heal: () => namespace.heal(),
      },
      log: process.env.HAMSTRING_VERIFY_VERBOSE ? (l) => process.stderr.write(`${l}\n`) : undefined,
    });
    // A failure in CI says what the workers went through: the last lines they logged that were not
    // the injected aborts.
    const summary = `${JSON.stringify({ ...report, final: undefined, concurrent: undefined })}\n${workerLogTail(workDir)}`;
    assert.equal(namespace.isCut, false);
    assert.equal(report.faults.length, CUTS_S.length, summary);
    assert.deepEqual(report.problems, [], summary);
    assert.equal(report.duplicates, 0, summary);
    assert.equal(report.lost, 0, summary);
    assert.equal(report.reordered, 0, summary);
    assert.equal(report.recordsOut, 2_000, summary);
    // The workers really were behind the cut link: while it was down, none of them committed.
    for (const f of report.faults) assert.equal(f.commitsDuring, 0, summary);
  });
});

/** The last 40 lines of the newest workers' log in `dir` that are not injected aborts. */
function workerLogTail(dir: string): string {
  const logs = readdirSync(dir)
    .filter((f) => f.endsWith('-workers.log'))
    .map((f) => join(dir, f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (logs[0] === undefined) return 'no workers log';
  return readFileSync(logs[0], 'utf8')
    .split('\n')
    .filter((l) => l !== '' && !l.includes('injected _STATE') && !l.includes('"event":"abort"'))
    .slice(-40)
    .map((l) => l.slice(0, 400))
    .join('\n');
}
