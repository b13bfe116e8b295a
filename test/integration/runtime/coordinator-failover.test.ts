import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { LocalKafkaCluster } from '../../../src/dev/kafka-cluster.ts';
import { projectRoot } from '../../../src/dev/paths.ts';
import { describePartitions, type PartitionState } from '../../../src/kafka/readiness.ts';
import { TransactionalWorker, type WorkerHooks } from '../../../src/runtime/index.ts';
import { syntheticKafkaError } from '../../../src/kafka/classify.ts';
import { coordinatorPartition } from '../../../src/verify/coordinators.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { uniqueGroup, uniqueTopic, uniqueTransactionalId } from '../../helpers/names.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import {
  assertExactlyOnce,
  createTopics,
  passThroughStage,
  seed,
  testKafkaOptions,
} from '../../support/pipeline-harness.ts';

/**
 * A transaction coordinator that fails over while a transaction's end is at it, on a 3-node cluster
 * of its own (ports from the run's base + 200, var/test/kafka-coordinator-failover). The client
 * retries the end at the successor, which must answer it as the retry it is: under transaction
 * protocol version 2 the end bumps the producer's epoch, so the successor sees a request one epoch
 * behind the record it loaded. A worker needs no recovery of its own for any of these.
 *
 * To put the failover exactly between the commit record's write and its answer, the follower that
 * comes last in the partition's replica order is paused just before the commit: the coordinator
 * writes the record, the other follower copies it, and the answer waits for the paused one. Then the
 * coordinator is killed and the paused follower resumed, so the controller elects the follower that
 * holds the record. A coordinator stopped instead (SIGSTOP) with the end unanswered answers
 * NOT_COORDINATOR once it resumes, past the broker session, and the client retries at the successor.
 */
const DATA_DIR = join(projectRoot, 'var', 'test', 'kafka-coordinator-failover');
const BASE_PORT = Number(process.env.HAMSTRING_TEST_KAFKA_PORT ?? 21092) + 200;

/** A recovery the worker ran: what failed, and what the plan did. */
type Recovery = Pick<
  Parameters<NonNullable<WorkerHooks['onRecovery']>>[0],
  'kind' | 'code' | 'operation' | 'action'
>;

let cluster: LocalKafkaCluster;
let bootstrap: string;

before(async () => {
  await LocalKafkaCluster.attach(DATA_DIR, { includeDown: true })?.stop();
  rmSync(DATA_DIR, { recursive: true, force: true });
  cluster = await LocalKafkaCluster.start({ nodes: 3, dataDir: DATA_DIR, basePort: BASE_PORT });
  bootstrap = cluster.bootstrapServers;
});

// The nodes' logs stay for a look after a failure; the next run wipes them first.
after(async () => {
  await cluster?.stop();
});

/** The partition of `__transaction_state` that holds `transactionalId`. */
async function transactionLogPartition(transactionalId: string): Promise<PartitionState> {
  const log = (await describePartitions(bootstrap, 10_000)).partitions.filter(
    (p) => p.topic === '__transaction_state',
  );
  const p = log.find((x) => x.partition === coordinatorPartition(transactionalId, log.length));
  assert.ok(p, `__transaction_state has the partition of ${transactionalId}`);
  return p;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Where the transactional id's coordinator sits, and which follower the controller elects next. */
interface Placement {
  coordinator: number;
  /** The follower first in replica order: the next leader while both followers are in sync. */
  successor: number;
  /** The other follower. */
  last: number;
}

/**
 * Runs a pass-through worker under load on a 3-node cluster; once it has committed a few times,
 * calls `atCommit` in the worker's next `beforeCommit` (its outputs and offsets acknowledged, the
 * commit not yet called), then `fault` while that commit is under way. Checks exactly once over
 * everything, the committed offsets included, and returns the recoveries the worker ran.
 */
async function midCommit(
  t: { diagnostic(message: string): void },
  name: string,
  transactionVersion: 1 | 2,
  atCommit: (p: Placement) => void,
  fault: (p: Placement, commits: { before: number; now: () => number }) => Promise<void>,
): Promise<{ recoveries: Recovery[]; placement: Placement; transactionalId: string }> {
  const input = uniqueTopic(`${name}-in`);
  const output = uniqueTopic(`${name}-out`);
  const group = uniqueGroup(name);
  const transactionalId = uniqueTransactionalId(name);
  // Replicated: the node the fault hits leads some of them.
  await createTopics(bootstrap, [input, output], 3, 3);
  await seed(bootstrap, input, 0, 2_000);

  const ran: Recovery[] = [];
  let armed: Placement | undefined;
  let hit = false;
  const w = new TransactionalWorker({
    stage: passThroughStage(input, output, group),
    instanceId: '0',
    mode: 'exactly-once',
    // A retried commit reaches the new coordinator once the old one is fenced (5 s) and the log
    // is loaded: a shorter call timeout would end the commit as unknown instead.
    kafka: testKafkaOptions(bootstrap, {
      transactionalId,
      transactionVersion,
      apiTimeoutMs: 30_000,
      commitRetryTimeoutMs: 60_000,
    }),
    batch: { size: 20, timeoutMs: 20 },
    log: silentLogger(),
    hooks: {
      // The loop's recoveries (a failed abort's own plan is not one of them).
      onRecovery: ({ kind, code, operation, action, situation }) => {
        if (situation === undefined) ran.push({ kind, code, operation, action });
      },
      beforeCommit: async () => {
        const p = armed;
        if (p === undefined) return;
        armed = undefined;
        // Every replica acknowledges the outputs and the offsets first: the fault hits only the
        // commit's own request.
        await sleep(300);
        hit = true;
        atCommit(p);
      },
    },
  });
  await w.start();
  try {
    await waitFor(() => w.status().committedTransactions >= 5, {
      timeoutMs: 60_000,
      message: 'worker under load',
    });
    const p = await transactionLogPartition(transactionalId);
    assert.equal(p.isr.length, 3, `every replica of ${JSON.stringify(p)} is in sync`);
    const [successor, last] = p.replicas.filter((r) => r !== p.leader) as [number, number];
    const placement = { coordinator: p.leader, successor, last };
    t.diagnostic(
      `${name}: transaction log partition ${p.partition}, replicas ${p.replicas.join(',')}, coordinator ${p.leader}`,
    );
    armed = placement;
    await waitFor(() => hit, { timeoutMs: 30_000, message: 'a commit starts' });
    const committedBefore = w.status().committedTransactions;
    await fault(placement, { before: committedBefore, now: () => w.status().committedTransactions });
    await waitFor(() => w.status().committedTransactions > committedBefore, {
      timeoutMs: 90_000,
      message: 'the worker commits again',
      observe: () => JSON.stringify(ran),
    });
    await seed(bootstrap, input, 2_000, 500);
    await assertExactlyOnce(bootstrap, { input, output, group, expected: 2_500, timeoutMs: 120_000 });
    assert.equal(w.status().failure, undefined);
    t.diagnostic(`${name}: recoveries ${JSON.stringify(ran)}`);
    return { recoveries: ran, placement, transactionalId };
  } finally {
    await w.stop();
  }
}

/**
 * The recoveries the worker ran, but for rejoining its group: the group's coordinator may sit on the
 * node the fault hits, and a member that missed its heartbeats then starts again as a new member
 * (`membership`), as it must. Anything else is a recovery the failover should not need: the end in
 * flight completes at the successor, and the next transaction finds the new coordinators (a
 * `send-offsets` that waited out its whole timeout for a killed group coordinator, before
 * patches/kafka-javascript/librdkafka-coord-req-recheck.patch).
 */
const beyondRejoining = (recoveries: readonly Recovery[]) =>
  recoveries.filter((r) => r.kind !== 'membership');

/**
 * Resumes every node a test paused and starts every node it killed (also when the test failed
 * half-way), and waits until each is back in every ISR.
 */
async function restoreCluster(): Promise<void> {
  for (const id of cluster.nodeIds()) {
    if (cluster.nodeState(id) === 'stopped') cluster.resumeNode(id);
    if (!cluster.isNodeRunning(id)) await cluster.startNode(id);
  }
  await waitFor(
    async () =>
      (await describePartitions(bootstrap, 10_000)).partitions.every(
        (p) => p.isr.length === p.replicas.length,
      ),
    { timeoutMs: 60_000, message: 'every node back in every ISR' },
  );
}

for (const version of [2, 1] as const)
  test(
    `transaction protocol version ${version}: the coordinator is killed between a commit's record and its answer; the retried commit completes at its successor, the worker at most rejoins its group, every record once`,
    { timeout: 300_000 },
    async (t) => {
      try {
        const { recoveries, placement, transactionalId } = await midCommit(
          t,
          `killed-v${version}`,
          version,
          // The answer waits for this follower; the other one copies the record.
          (p) => cluster.pauseNode(p.last),
          async (p, commits) => {
            // Well inside the paused node's broker session (5 s): it stays in the ISR, so the
            // controller elects the successor, which holds the record.
            await sleep(1_000);
            assert.equal(commits.now(), commits.before, 'the commit waits for the paused follower');
            await cluster.killNode(p.coordinator);
            cluster.resumeNode(p.last);
          },
        );
        assert.deepEqual(
          beyondRejoining(recoveries),
          [],
          'the commit in flight completed by itself, and nothing else waited',
        );
        assert.equal(
          (await transactionLogPartition(transactionalId)).leader,
          placement.successor,
          'the follower that holds the commit record coordinates now',
        );
      } finally {
        await restoreCluster();
      }
    },
  );

// The resumed node answers NOT_COORDINATOR, and the client retries the end at the successor. An
// abort is the end when the worker's `beforeCommit` fails (an injected `_STATE`): the only recovery
// then is the rewind that error asks for.
for (const end of ['commit', 'abort'] as const)
  test(
    `transaction protocol version 2: the coordinator is stopped (SIGSTOP) past the broker session with ${end === 'commit' ? 'a commit' : 'an abort'} unanswered, then resumed: the worker goes on, every record once`,
    { timeout: 300_000 },
    async (t) => {
      try {
        const { recoveries } = await midCommit(
          t,
          `stopped-${end}-v2`,
          2,
          (p) => {
            cluster.pauseNode(p.coordinator);
            if (end === 'abort')
              throw syntheticKafkaError('_STATE', 'commit-transaction', { isTxnRequiresAbort: true });
          },
          async (p) => {
            await sleep(8_000);
            cluster.resumeNode(p.coordinator);
          },
        );
        assert.deepEqual(
          beyondRejoining(recoveries).map((r) => [r.code, r.action]),
          end === 'commit' ? [] : [['_STATE', 'rewind']],
          `the ${end} in flight completed by itself, and nothing else waited`,
        );
      } finally {
        await restoreCluster();
      }
    },
  );
