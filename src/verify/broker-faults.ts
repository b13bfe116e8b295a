/** Broker and network faults, and the scenarios made of them (they need a cluster the run started). */
import { findCoordinators } from './coordinators.ts';
import type { Scenario, ScenarioContext } from './scenario.ts';
import { ABORT_ONE_IN_THREE, holdFault, progressGate, sleep } from './schedule.ts';

/** Past the broker session timeout of the local clusters (broker.session.timeout.ms = 5 s). */
const PAST_BROKER_SESSION_MS = 8_000;
/** Coordinator pauses of `coordinator-sigstop`: each catches a commit in flight only by chance. */
const COORDINATOR_PAUSES = 8;

function cluster(ctx: ScenarioContext) {
  if (!ctx.cluster) throw new Error('this scenario needs a local cluster (--local 1|3)');
  return ctx.cluster;
}

/** Restarts node `id`: a clean stop, or kill -9 and a wait past the session timeout (`hard`). */
export async function bounceBroker(ctx: ScenarioContext, id: number, hard: boolean): Promise<void> {
  const c = cluster(ctx);
  if (hard) {
    await c.killNode(id);
    await sleep(PAST_BROKER_SESSION_MS);
  } else {
    await c.stopNode(id);
  }
  // startNode waits until the node is back in the ISR of its partitions and nothing is
  // under-replicated.
  await c.startNode(id);
}

/** SIGSTOPs node `id` for `ms`, then SIGCONTs it. */
export function pauseBroker(ctx: ScenarioContext, id: number, ms: number): Promise<void> {
  const c = cluster(ctx);
  return holdFault(
    ms,
    () => c.pauseNode(id),
    () => c.resumeNode(id),
  );
}

/** Cuts the workers' link to Kafka (their network namespace's veth) for `ms`, then heals it. */
function cutNetwork(ctx: ScenarioContext, ms: number): Promise<void> {
  const network = ctx.network;
  if (!network) throw new Error('this scenario needs its workers in a network namespace');
  return holdFault(
    ms,
    () => network.cut(),
    () => network.heal(),
  );
}

/** The run's transactional ids and groups, with the node hosting each one's coordinator now. */
function runCoordinators(ctx: ScenarioContext) {
  return findCoordinators(ctx.bootstrap, {
    groups: ctx.groups.map((g) => g.spec.group),
    // The runtime's default transactional id: `<stage name>-<instance id>`.
    transactionalIds: ctx.groups.flatMap((g) => g.instances().map((i) => `${g.spec.group}-${i}`)),
  }).catch(() => []);
}

/** The cluster's nodes ordered by how many of `coordinators` they host, most first. */
function byCoordinators(ctx: ScenarioContext, coordinators: readonly { node: number }[]): number[] {
  const hosted = (id: number) => coordinators.filter((c) => c.node === id).length;
  return [...cluster(ctx).nodeIds()].sort((a, b) => hosted(b) - hosted(a));
}

/** Faults of 5, 30 and 90 s, each after 8 % more progress. */
async function fiveThirtyNinety(
  ctx: ScenarioContext,
  kind: string,
  target: (seconds: number) => string,
  hold: (ms: number) => Promise<void>,
): Promise<void> {
  for (const s of [5, 30, 90]) {
    const gated = await progressGate(ctx, 0.08);
    await ctx.fault(kind, target(s), () => hold(s * 1000), gated);
  }
}

/** The broker and network fault scenarios, in the order `hamstring verify --scenario all` runs them. */
export const brokerFaultScenarios: readonly Scenario[] = [
  {
    name: 'broker-sigstop',
    description: 'SIGSTOP the broker for 5, 30 and 90 s (1-node cluster)',
    needs: 'local-1',
    abortRatio: ABORT_ONE_IN_THREE,
    loadSeconds: () => 220,
    run: async (ctx) => {
      const [node] = cluster(ctx).nodeIds();
      await fiveThirtyNinety(
        ctx,
        'broker-sigstop',
        (s) => `node ${node} ${s} s`,
        (ms) => pauseBroker(ctx, node!, ms),
      );
    },
  },
  {
    name: 'network-cut',
    description:
      'cut the network between the workers (in a network namespace of their own) and the broker for 5, 30 and 90 s; the broker keeps running (1-node cluster, root)',
    needs: 'local-1',
    workersInNamespace: true,
    abortRatio: ABORT_ONE_IN_THREE,
    loadSeconds: () => 220,
    run: (ctx) =>
      fiveThirtyNinety(
        ctx,
        'network-cut',
        (s) => `workers <-> broker ${s} s`,
        (ms) => cutNetwork(ctx, ms),
      ),
  },
  {
    name: 'broker-restart',
    description: 'clean restart (SIGTERM, controlled shutdown) of each broker in turn (3 nodes)',
    needs: 'local-3',
    abortRatio: ABORT_ONE_IN_THREE,
    loadSeconds: () => 180,
    run: async (ctx) => {
      for (const id of cluster(ctx).nodeIds()) {
        const gated = await progressGate(ctx, 0.1);
        await ctx.fault('broker-restart', `node ${id}`, () => bounceBroker(ctx, id, false), gated);
      }
    },
  },
  {
    name: 'broker-bounce',
    description:
      'hard bounce of each broker in turn (kill -9, wait past the session timeout, restart, wait until nothing is under-replicated); every node hosts some transaction and group coordinators',
    needs: 'local-3',
    abortRatio: ABORT_ONE_IN_THREE,
    loadSeconds: () => 200,
    run: async (ctx) => {
      // The node hosting the most coordinators (groups and transactional ids of the workers) goes
      // first, so the coordinator failover happens under full load.
      const coordinators = await runCoordinators(ctx);
      const hosted = (id: number) => coordinators.filter((c) => c.node === id);
      for (const id of byCoordinators(ctx, coordinators)) {
        const gated = await progressGate(ctx, 0.1);
        const roles = hosted(id);
        const what =
          roles.length === 0
            ? 'no coordinator of this run'
            : `${roles.filter((r) => r.kind === 'group').length} group and ${roles.filter((r) => r.kind === 'transaction').length} transaction coordinator(s)`;
        await ctx.fault('broker-kill-9', `node ${id} (${what})`, () => bounceBroker(ctx, id, true), gated);
      }
    },
  },
  {
    name: 'coordinator-sigstop',
    description: `SIGSTOP the node hosting most of the workers' transaction coordinators for ${PAST_BROKER_SESSION_MS / 1000} s (past the broker session timeout, so the coordinators move while commits are in flight), ${COORDINATOR_PAUSES} times, each after 8 % more progress (3 nodes)`,
    needs: 'local-3',
    abortRatio: ABORT_ONE_IN_THREE,
    loadSeconds: () => 200,
    run: async (ctx) => {
      // Ends in flight at the stopped coordinator are retried at its successor; under transaction
      // protocol version 2 such an end once came back fenced here, and the runtime's answer is a
      // new producer: exactly once must hold across it. The leaders move, so the node is chosen
      // anew each time.
      for (let i = 1; i <= COORDINATOR_PAUSES; i += 1) {
        const gated = await progressGate(ctx, 0.08);
        const transactions = (await runCoordinators(ctx)).filter((c) => c.kind === 'transaction');
        const [node] = byCoordinators(ctx, transactions);
        await ctx.fault(
          'broker-sigstop',
          `node ${node} (transaction coordinator, pause ${i})`,
          () => pauseBroker(ctx, node!, PAST_BROKER_SESSION_MS),
          gated,
        );
      }
    },
  },
];
