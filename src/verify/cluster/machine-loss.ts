import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocalClickHouse } from '../../dev/clickhouse-server.ts';
import { createAdmin } from '../../kafka/admin.ts';
import { verifyTraffic, type TrafficShape } from '../pipeline/feed.ts';
import { accountLines, type LineAccounting } from '../pipeline/line-fates.ts';
import { readPipeline } from '../pipeline/read-pipeline.ts';
import { stageGroups } from '../pipeline/stage-groups.ts';
import { feedExactlyOnce } from './exactly-once-feed.ts';
import { AssignmentWatch, groupPartitions, type WatchedGroup } from './assignments.ts';
import { SimulatedPipeline } from './simulated-pipeline.ts';
import { trimmedConfig } from './trim-config.ts';

export interface MachineLossOptions {
  readonly tag: number;
  readonly dir: string;
  readonly brokerPort: number;
  readonly clickhouse: LocalClickHouse;
  readonly database: string;
  readonly baseConfig: string;
  /** Prefilters, inspectors and detectors left out of the base config (trim-config.ts). */
  readonly drop: readonly string[];
  readonly partitions: number;
  readonly traffic: TrafficShape;
  readonly feedMs: number;
  /** The machine lost (`m2`), when after the feed began, and for how long. */
  readonly lose: string;
  readonly cutAtMs: number;
  readonly cutForMs: number;
  readonly log: (line: string) => void;
}

/** How long one stage's partitions took to move off the lost machine and back. */
export interface GroupMove {
  readonly label: string;
  readonly group: string;
  readonly partitions: number;
  /** From the cut until survivors held every partition; undefined: never. */
  readonly offMs: number | undefined;
  /** From the reconnect until the machine held a partition again; undefined: never. */
  readonly backMs: number | undefined;
  /**
   * The group's coordinator was the lost machine's broker: the group has none until the controller
   * fences that broker (broker.session.timeout.ms) and another takes its offsets partition, so its
   * members cannot rebalance before, whatever their own session timeout.
   */
  readonly coordinatorLost: boolean;
  /** The group's last description (assignments.ts `describe`). */
  readonly last: string;
}

export interface MachineLossReport {
  readonly lines: number;
  readonly invalidLines: number;
  readonly lost: string;
  readonly cutForMs: number;
  readonly moves: readonly GroupMove[];
  readonly wentQuiet: boolean;
  readonly agentBehind: readonly string[];
  readonly unexpectedExits: readonly { label: string; code: number | null; signal: string | null }[];
  readonly accounting: LineAccounting;
  readonly durationMs: number;
  readonly problems: readonly string[];
}

/** Partitions must be spread over every machine before the cut, or nothing could move. */
const SPREAD_TIMEOUT_MS = 180_000;
/** After the reconnect, how long the machine may take to hold partitions again. */
const RETURN_TIMEOUT_MS = 180_000;

/**
 * Three simulated machines run the pipeline; with the seed's traffic flowing, one machine is cut
 * off the network for longer than the session timeout, then reconnected. Every input line must
 * reach exactly one fate (the pipeline accounting, line-fates.ts), every alert once; the report
 * gives, per stage, the time its partitions took to move to the survivors and back.
 */
export async function runMachineLoss(o: MachineLossOptions): Promise<MachineLossReport> {
  const began = Date.now();
  rmSync(o.dir, { recursive: true, force: true });
  const pipeline = await SimulatedPipeline.start({
    tag: o.tag,
    machines: 3,
    dir: o.dir,
    brokerPort: o.brokerPort,
    partitions: o.partitions,
    clickhouse: o.clickhouse,
    database: o.database,
    baseConfig: trimmedConfig(o.baseConfig, o.dir, o.drop),
    inspectors: 'shipped',
  });
  let watch: AssignmentWatch | undefined;
  try {
    o.log(`machines up (${((Date.now() - began) / 1000).toFixed(0)} s); starting the pipeline`);
    const input = await pipeline.startPipeline();
    const groups: WatchedGroup[] = [...stageGroups(pipeline.config, pipeline.layout)].map(([label, g]) => ({
      label,
      ...g,
    }));
    const bootstrap = pipeline.kafka.bootstrapServers;
    watch = new AssignmentWatch(
      () => createAdmin(bootstrap, 'machine-loss-watch'),
      groups,
      await groupPartitions(pipeline.admin, groups),
    );
    await waitFor(
      () => groups.every((g) => (watch?.holdings(g.group).get(o.lose) ?? 0) > 0),
      SPREAD_TIMEOUT_MS,
    );
    o.log(`every stage has partitions on ${o.lose} (${((Date.now() - began) / 1000).toFixed(0)} s)`);
    const traffic = verifyTraffic(o.traffic);
    const machine = pipeline.network.machine(o.lose);
    let cutAt = 0;
    let backAt = 0;
    const cut = (async () => {
      await sleep(o.cutAtMs);
      pipeline.network.disconnect(machine);
      cutAt = Date.now();
      o.log(`${o.lose} cut off for ${o.cutForMs / 1000} s`);
      await sleep(o.cutForMs);
      pipeline.network.reconnect(machine);
      backAt = Date.now();
      o.log(`${o.lose} back`);
    })();
    o.log(`feeding ${traffic.lines.length} lines over ${o.feedMs / 1000} s`);
    const [fed] = await Promise.all([
      feedExactlyOnce(pipeline.kafka.bootstrapServers, input, traffic.lines, o.feedMs),
      cut,
    ]);
    o.log(`fed in ${fed.transactions} transactions, ${fed.resent} aborted and sent again`);
    await waitFor(
      () => groups.every((g) => watch?.movedBackAt(g.group, o.lose, backAt) !== undefined),
      RETURN_TIMEOUT_MS,
    );
    o.log('fed; waiting until the pipeline is idle');
    const { wentQuiet, agentBehind } = await pipeline.settle();
    await watch.stop();
    writeFileSync(join(o.dir, 'assignments.jsonl'), assignmentLog(watch, cutAt, backAt));
    const moves = groups.map((g): GroupMove => {
      const off = watch?.movedOffAt(g.group, o.lose, cutAt);
      const back = watch?.movedBackAt(g.group, o.lose, backAt);
      return {
        label: g.label,
        group: g.group,
        partitions: watch?.partitions.get(g.group) ?? 0,
        offMs: off === undefined ? undefined : off - cutAt,
        backMs: back === undefined ? undefined : back - backAt,
        coordinatorLost: watch?.coordinatorAt(g.group, cutAt) === machine.index,
        last: watch?.describe(g.group) ?? '',
      };
    });
    const read = await readPipeline({ config: pipeline.config, database: o.database });
    const accounting = accountLines(
      traffic.lines.map((l) => ({ id: l.id, valid: l.valid })),
      read,
    );
    const unexpectedExits = pipeline.processes.unexpectedExits;
    const problems = [
      ...accounting.problems,
      ...(wentQuiet ? [] : ['the pipeline never went idle']),
      ...(agentBehind.length === 0 ? [] : [`the agent had not copied every row: ${agentBehind.join(', ')}`]),
      ...unexpectedExits.map((e) => `${e.label} exited by itself (code ${e.code}, signal ${e.signal})`),
      ...moves.flatMap((m) => [
        ...(m.offMs === undefined ? [`${m.label}: partitions never all moved off ${o.lose}`] : []),
        ...(m.backMs === undefined ? [`${m.label}: ${o.lose} never held a partition again`] : []),
      ]),
    ];
    return {
      lines: traffic.lines.length,
      invalidLines: traffic.lines.filter((l) => !l.valid).length,
      lost: o.lose,
      cutForMs: o.cutForMs,
      moves,
      wentQuiet,
      agentBehind,
      unexpectedExits,
      accounting,
      durationMs: Date.now() - began,
      problems,
    };
  } finally {
    await watch?.stop();
    await pipeline.close();
  }
}

/** The report as text: the moves per stage, then the accounting. */
export function machineLossText(r: MachineLossReport): string {
  const s = (ms: number | undefined) => (ms === undefined ? 'never' : `${(ms / 1000).toFixed(1)} s`);
  const a = r.accounting;
  return [
    `machine loss: ${r.lost} cut off for ${r.cutForMs / 1000} s; run ${(r.durationMs / 1000).toFixed(0)} s; ${r.problems.length === 0 ? 'passed' : 'FAILED'}`,
    ...r.moves.map(
      (m) =>
        `  ${m.label} (${m.partitions} partitions): moved to survivors ${s(m.offMs)} after the cut` +
        `${m.coordinatorLost ? ` (its coordinator was on ${r.lost})` : ''}, back ${s(m.backMs)} after the return (last: ${m.last})`,
    ),
    ...missingByTable(a),
    `  ${r.lines} lines (${r.invalidLines} invalid): ${Object.entries(a.fates)
      .map(([k, n]) => `${k} ${n}`)
      .join(
        ', ',
      )}; lost ${a.lost.length}, seen twice ${a.inTwoBatches.length}, alerts twice ${a.alertsTwice.length}, ` +
      `monitoring rows missing ${a.monitoringMissing.length} / twice ${a.monitoringTwice.length}; alerted hosts ${a.alertedHosts.length}`,
    ...r.problems.map((p) => `  problem: ${p}`),
  ].join('\n');
}

/** Monitoring rows missing, per table and expectation, with the first few lines or batches. */
function missingByTable(a: LineAccounting): string[] {
  const by = new Map<string, string[]>();
  for (const f of a.monitoringMissing) {
    const [what, id] = f.id.split(': ');
    const key = `${f.table} (${what})`;
    by.set(key, [...(by.get(key) ?? []), id ?? f.id]);
  }
  return [...by].map(([k, ids]) => `  missing ${k}: ${ids.length}, e.g. ${ids.slice(0, 8).join(', ')}`);
}

/**
 * Every group description of the run, one JSON line each, times relative to the cut (and the
 * return): what a move time in the report was read from.
 */
function assignmentLog(watch: AssignmentWatch, cutAt: number, backAt: number): string {
  return watch.snapshots
    .map((s) => {
      const held = new Map<string, number>();
      for (const m of s.owners.values()) held.set(m, (held.get(m) ?? 0) + 1);
      return JSON.stringify({
        sinceCut: (s.atMs - cutAt) / 1000,
        sinceBack: (s.atMs - backAt) / 1000,
        group: s.group,
        state: s.state,
        coordinator: s.coordinator,
        held: Object.fromEntries(held),
        members: Object.fromEntries(s.members),
      });
    })
    .join('\n');
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitFor(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (check()) return true;
    await sleep(500);
  }
  return false;
}
