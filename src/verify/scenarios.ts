import { bounceBroker, brokerFaultScenarios, pauseBroker } from './broker-faults.ts';
import type { Scenario, ScenarioContext } from './scenario.ts';
import { ABORT_ONE_IN_THREE, gate, progressGate, sleep } from './schedule.ts';
import type { WorkerGroup } from './worker-pool.ts';

/** A prime, so that the poison records fall on different keys and partitions. */
const OVERSIZED_EVERY = 997;

/** Stops `instance` with `signal` and starts it again with the same instance id (as a restarted pod). */
async function restartWorker(g: WorkerGroup, instance: string, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  await g.stop(instance, signal);
  g.start(instance);
}

/**
 * `rounds` rounds over every worker of every stage: each is stopped with `signal` after it made
 * at least 20 % of its share (records / workers) since its last start, then started again with the
 * same instance id (as a restarted pod).
 */
async function workerRounds(ctx: ScenarioContext, signal: 'SIGTERM' | 'SIGKILL', rounds: number) {
  const kind = signal === 'SIGTERM' ? 'worker-sigterm' : 'worker-kill-9';
  for (let round = 1; round <= rounds; round += 1) {
    for (const g of ctx.groups) {
      for (const instance of g.instances()) {
        const gated = await gate(
          ctx,
          () => (g.progress.get(instance) ?? 0) >= (0.2 * ctx.records) / ctx.workers,
        );
        await ctx.fault(
          kind,
          `${g.spec.group}/${instance} (round ${round})`,
          () => restartWorker(g, instance, signal),
          gated,
          { group: g.spec.group, instance },
        );
      }
    }
  }
}

async function stallWorker(ctx: ScenarioContext, g: WorkerGroup, instance: string, stallMs: number) {
  const before = g.stalls;
  g.signal(instance, 'SIGUSR2');
  const deadline = Date.now() + 60_000;
  while (g.stalls === before && Date.now() < deadline) await sleep(100);
  await sleep(stallMs);
  ctx.log(`${g.spec.group}/${instance} stalled for ${stallMs} ms`);
}

const pick = <T>(ctx: ScenarioContext, xs: readonly T[]): T => xs[Math.floor(ctx.random() * xs.length)]!;

/** One random fault of the soak; broker faults only when the run owns the cluster. */
async function randomFault(ctx: ScenarioContext): Promise<void> {
  const g = pick(ctx, ctx.groups);
  const instance = pick(ctx, g.instances());
  const kinds = ['worker-kill-9', 'worker-sigterm', 'worker-stall'];
  if (ctx.cluster) {
    kinds.push('broker-sigstop');
    if (ctx.cluster.nodeIds().length === 3) kinds.push('broker-kill-9', 'broker-restart');
  }
  const kind = pick(ctx, kinds);
  const node = ctx.cluster ? pick(ctx, ctx.cluster.nodeIds()) : 0;
  switch (kind) {
    case 'worker-kill-9':
    case 'worker-sigterm':
      return ctx.fault(
        kind,
        `${g.spec.group}/${instance}`,
        () => restartWorker(g, instance, kind === 'worker-kill-9' ? 'SIGKILL' : 'SIGTERM'),
        true,
        { group: g.spec.group, instance },
      );
    case 'worker-stall':
      return ctx.fault(
        kind,
        `${g.spec.group}/${instance}`,
        () => stallWorker(ctx, g, instance, 15_000),
        true,
        {
          group: g.spec.group,
          instance,
        },
      );
    case 'broker-sigstop': {
      const ms = 5_000 + Math.floor(ctx.random() * 10_000);
      return ctx.fault(kind, `node ${node} ${ms} ms`, () => pauseBroker(ctx, node, ms));
    }
    default:
      return ctx.fault(kind, `node ${node}`, () => bounceBroker(ctx, node, kind === 'broker-kill-9'));
  }
}

/** Every scenario `hamstring verify --scenario` knows, in the order `all` runs them. */
export const scenarios: readonly Scenario[] = [
  {
    name: 'abort-hook',
    description: 'no external fault; the beforeCommit hook aborts ~1 transaction in 3',
    needs: 'any',
    abortRatio: ABORT_ONE_IN_THREE,
    loadSeconds: () => 30,
    run: async (ctx) => {
      await progressGate(ctx, 0.5);
    },
  },
  {
    name: 'oversized-outputs',
    description:
      "every 997th record's output is too large for Kafka (alternately past the output topic's max.message.bytes and the producer's message.max.bytes), 1/3 aborts, one kill -9 round over every worker; those records must be in <input>.DLT once each",
    needs: 'any',
    abortRatio: ABORT_ONE_IN_THREE,
    oversizedEvery: OVERSIZED_EVERY,
    loadSeconds: ({ workers }) => 40 + 10 * workers,
    run: (ctx) => workerRounds(ctx, 'SIGKILL', 1),
  },
  {
    name: 'chain',
    description: 'two stages in -> mid -> out (two groups), 1/3 aborts, one kill -9 round over every worker',
    needs: 'any',
    chain: true,
    abortRatio: ABORT_ONE_IN_THREE,
    loadSeconds: ({ workers }) => 40 + 15 * workers,
    run: (ctx) => workerRounds(ctx, 'SIGKILL', 1),
  },
  {
    name: 'worker-sigterm',
    description: 'three rounds over every worker: SIGTERM after >= 20% of its share, restart',
    needs: 'any',
    abortRatio: ABORT_ONE_IN_THREE,
    loadSeconds: ({ workers }) => 40 + 3 * 10 * workers,
    run: (ctx) => workerRounds(ctx, 'SIGTERM', 3),
  },
  {
    name: 'worker-kill',
    description: 'three rounds over every worker: kill -9 after >= 20% of its share, restart',
    needs: 'any',
    abortRatio: ABORT_ONE_IN_THREE,
    loadSeconds: ({ workers }) => 40 + 3 * 10 * workers,
    run: (ctx) => workerRounds(ctx, 'SIGKILL', 3),
  },
  {
    name: 'worker-stall',
    description: 'each worker blocks its event loop 15 s, past max.poll.interval.ms (10 s)',
    needs: 'any',
    abortRatio: ABORT_ONE_IN_THREE,
    maxPollMs: 10_000,
    stallMs: 15_000,
    loadSeconds: ({ workers }) => 40 + 30 * workers,
    run: async (ctx) => {
      for (const g of ctx.groups)
        for (const instance of g.instances()) {
          const gated = await progressGate(ctx, 0.1);
          await ctx.fault(
            'worker-stall',
            `${g.spec.group}/${instance}`,
            () => stallWorker(ctx, g, instance, 15_000),
            gated,
            { group: g.spec.group, instance },
          );
        }
    },
  },
  {
    name: 'scale',
    description: 'the group scales up to 2M workers, down to 1, back to M, under load',
    needs: 'any',
    abortRatio: ABORT_ONE_IN_THREE,
    loadSeconds: () => 90,
    run: async (ctx) => {
      for (const g of ctx.groups) {
        const base = g.instances();
        const extra = base.map((_, i) => `w${base.length + i}`);
        let gated = await progressGate(ctx, 0.15);
        await ctx.fault(
          'scale-up',
          `${g.spec.group} to ${base.length + extra.length}`,
          async () => {
            for (const i of extra) g.start(i);
            await sleep(1_000);
          },
          gated,
        );
        gated = await progressGate(ctx, 0.15);
        await ctx.fault(
          'scale-down',
          `${g.spec.group} to 1`,
          async () => {
            await Promise.all([...extra, ...base.slice(1)].map((i) => g.stop(i, 'SIGTERM')));
          },
          gated,
        );
        gated = await progressGate(ctx, 0.15);
        await ctx.fault(
          'scale-up',
          `${g.spec.group} to ${base.length}`,
          async () => {
            for (const i of base) g.start(i);
            await sleep(1_000);
          },
          gated,
        );
      }
    },
  },
  ...brokerFaultScenarios,
  {
    name: 'soak',
    description: 'one random fault every 10-30 s for the soak duration, then a fault-free recovery window',
    needs: 'any',
    abortRatio: ABORT_ONE_IN_THREE,
    loadSeconds: ({ soakMs }) => (soakMs ?? 120_000) / 1000 + 60,
    run: async (ctx) => {
      const end = Date.now() + ctx.soakMs;
      while (Date.now() < end && ctx.committed() < ctx.records * 0.97) {
        await sleep(10_000 + ctx.random() * 20_000);
        await randomFault(ctx);
      }
    },
  },
  {
    name: 'smoke',
    description: 'kill -9 and SIGTERM round over every worker, 1/3 aborts, broker SIGSTOP 5 s (if local)',
    needs: 'any',
    abortRatio: ABORT_ONE_IN_THREE,
    loadSeconds: ({ workers }) => 30 + 12 * workers,
    run: async (ctx) => {
      await workerRounds(ctx, 'SIGKILL', 1);
      await workerRounds(ctx, 'SIGTERM', 1);
      if (ctx.cluster) {
        const [node] = ctx.cluster.nodeIds();
        const gated = await progressGate(ctx, 0.05);
        await ctx.fault('broker-sigstop', `node ${node} 5 s`, () => pauseBroker(ctx, node!, 5_000), gated);
      }
    },
  },
];

/** The scenarios a run can do on this Kafka: broker faults only on a cluster the run started. */
export function applicable(s: Scenario, local: 1 | 3 | undefined): boolean {
  switch (s.needs) {
    case 'any':
      return true;
    case 'local':
      return local !== undefined;
    case 'local-1':
      return local === 1;
    case 'local-3':
      return local === 3;
  }
}
