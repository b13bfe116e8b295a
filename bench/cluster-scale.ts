/**
 * Scaling the collector by adding instances, on simulated machines (src/dev/machine-network.ts):
 * three machines, each with a Kafka node and a logserver; the collector runs on 1, 2 and then 3 of
 * them (one instance each). Per count: the lines are first forwarded by the logserver with the
 * collectors stopped, then the collectors start; the figures are the time until they hold every
 * partition (rebalance), lines/s from then until their group committed every line, CPU seconds of
 * the collector processes per 1000 lines, and partitions per instance. Then a fourth machine joins
 * the last run with its own collector: the time until it holds partitions, with no other process
 * restarted.
 *
 *   node --import tsx bench/cluster-scale.ts [--lines N] [--base P]
 *
 * Needs root (network namespaces) and the Kafka jars; ClickHouse on port P (default 34500) and P+1,
 * machines tagged P+92 (subnet 10.214.(P+92 mod 256).0/24). This host has 2 cores: the absolute
 * lines/s cannot grow with instances; what scaling must show is that CPU per line does not rise.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LocalClickHouse } from '../src/dev/clickhouse-server.ts';
import { MachineNetwork } from '../src/dev/machine-network.ts';
import { projectRoot } from '../src/dev/paths.ts';
import { snapshotGroup, type WatchedGroup } from '../src/verify/cluster/assignments.ts';
import { SimulatedPipeline } from '../src/verify/cluster/simulated-pipeline.ts';
import { trimmedConfig } from '../src/verify/cluster/trim-config.ts';
import { feedLines, verifyTraffic } from '../src/verify/pipeline/feed.ts';
import { processUsage } from '../src/verify/pipeline/soak-sampler.ts';
import { groupLag, stageGroups } from '../src/verify/pipeline/stage-groups.ts';

const { values } = parseArgs({ options: { lines: { type: 'string' }, base: { type: 'string' } } });
const LINES = Number(values.lines ?? 30_000);
const BASE = Number(values.base ?? 34_500);
const PARTITIONS = 6;
const dir = join(projectRoot, 'var', 'bench', 'cluster-scale');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Figures {
  collectors: number;
  rebalanceMs: number;
  linesPerSecond: number;
  cpuMsPer1000: number;
  partitionsPerInstance: string;
  joinMs?: number;
  afterJoin?: string;
}

async function until(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(250);
  }
}

/** Partitions held per machine, as `m1 2, m2 2, m3 2`. */
async function holdings(p: SimulatedPipeline, g: WatchedGroup): Promise<Map<string, number>> {
  const s = await snapshotGroup(p.admin, g);
  const counts = new Map<string, number>();
  if (s?.state !== 'Stable') return counts;
  for (const m of s.owners.values()) counts.set(m, (counts.get(m) ?? 0) + 1);
  return counts;
}

async function measure(clickhouse: LocalClickHouse, collectors: number, join4: boolean): Promise<Figures> {
  const pipeline = await SimulatedPipeline.start({
    tag: BASE + 92,
    machines: 3,
    dir: join(dir, `c${collectors}`),
    brokerPort: BASE + 92,
    partitions: PARTITIONS,
    clickhouse,
    database: `cluster_scale_${collectors}`,
    baseConfig: trimmedConfig(join(projectRoot, 'config.yaml'), dir, [
      'tunnel_prefilter',
      'tunnel_inspector',
      'domainator',
    ]),
    inspectors: 'shipped',
    kinds: ['logserver', 'collector'],
    instancesOn: Object.fromEntries(
      ['m1', 'm2', 'm3'].map((m, i) => [m, { collector: i < collectors ? 1 : 0 }]),
    ),
  });
  try {
    const input = await pipeline.startPipeline();
    const groups = stageGroups(pipeline.config, pipeline.layout);
    const logserver = groups.get('logserver');
    const collector = groups.get('collector dga_collector');
    if (!logserver || !collector) throw new Error('no logserver or collector group');
    const watched: WatchedGroup = { label: 'collector', ...collector };
    const labels = pipeline.processes.labels().filter((l) => l.includes(' collector '));
    // Collectors stopped while the logserver forwards every line: they then start on a full topic.
    await Promise.all(labels.map((l) => pipeline.processes.stop(l, 'SIGTERM')));
    // 600 hosts are about 38 /24 subnets, the key the logserver forwards by: every partition gets lines.
    const traffic = verifyTraffic({
      seed: 3,
      hosts: 600,
      rate: 500,
      durationSeconds: Math.ceil(LINES / 500),
      hostileEvery: 0,
    });
    await feedLines(pipeline.kafka.bootstrapServers, input, traffic.lines, 0);
    await until(
      async () => (await groupLag(pipeline.admin, logserver.group, logserver.topics, 10_000)) === 0,
      300_000,
      'logserver forwarded every line',
    );
    const started = Date.now();
    for (const l of labels) pipeline.processes.start(l);
    await until(
      async () =>
        [...(await holdings(pipeline, watched)).values()].reduce((a, b) => a + b, 0) === PARTITIONS &&
        (await holdings(pipeline, watched)).size === collectors,
      180_000,
      'collectors hold every partition',
    );
    const stable = Date.now();
    const cpu0 = labels.reduce(
      (s, l) => s + (processUsage(pipeline.processes.pid(l) ?? -1)?.cpuSeconds ?? 0),
      0,
    );
    await until(
      async () => (await groupLag(pipeline.admin, collector.group, collector.topics, 10_000)) === 0,
      900_000,
      'collectors committed every line',
    );
    const done = Date.now();
    const cpu1 = labels.reduce(
      (s, l) => s + (processUsage(pipeline.processes.pid(l) ?? -1)?.cpuSeconds ?? 0),
      0,
    );
    const held = await holdings(pipeline, watched);
    const figures: Figures = {
      collectors,
      rebalanceMs: stable - started,
      linesPerSecond: traffic.lines.length / ((done - stable) / 1000),
      cpuMsPer1000: ((cpu1 - cpu0) * 1000 * 1000) / traffic.lines.length,
      partitionsPerInstance: [...held].map(([m, n]) => `${m} ${n}`).join(', '),
    };
    if (join4) {
      const pids = pipeline.processes.labels().map((l) => pipeline.processes.pid(l));
      const joinedAt = Date.now();
      pipeline.addMachine(4);
      await until(
        async () => ((await holdings(pipeline, watched)).get('m4') ?? 0) > 0,
        180_000,
        'm4 holds partitions',
      );
      figures.joinMs = Date.now() - joinedAt;
      const after = await holdings(pipeline, watched);
      const same = pipeline.processes.labels().every((l, i) => pipeline.processes.pid(l) === pids[i]);
      figures.afterJoin = `${[...after].map(([m, n]) => `${m} ${n}`).join(', ')}; other processes restarted: ${same ? 'none' : 'SOME'}`;
    }
    return figures;
  } finally {
    await pipeline.close();
  }
}

const unavailable = MachineNetwork.unavailableReason();
if (unavailable !== undefined) {
  process.stdout.write(`skipped: ${unavailable}\n`);
  process.exit(0);
}
rmSync(dir, { recursive: true, force: true });
const clickhouse = await LocalClickHouse.start({
  dataDir: join(dir, 'clickhouse'),
  httpPort: BASE,
  tcpPort: BASE + 1,
});
const began = Date.now();
const rows: Figures[] = [];
try {
  for (const n of [1, 2, 3]) {
    const f = await measure(clickhouse, n, n === 3);
    rows.push(f);
    process.stdout.write(`${JSON.stringify(f)}\n`);
  }
} finally {
  await clickhouse.stop();
}
process.stdout.write(
  [
    `\n${LINES} lines per run, ${PARTITIONS} partitions, 3 machines on 2 cores (${((Date.now() - began) / 1000).toFixed(0)} s)`,
    '| collectors | rebalance | lines/s | CPU ms per 1000 lines | partitions per instance |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.collectors} | ${(r.rebalanceMs / 1000).toFixed(1)} s | ${r.linesPerSecond.toFixed(0)} | ${r.cpuMsPer1000.toFixed(0)} | ${r.partitionsPerInstance} |`,
    ),
    ...rows.flatMap((r) =>
      r.joinMs === undefined
        ? []
        : [`fourth machine joined: holds partitions after ${(r.joinMs / 1000).toFixed(1)} s; ${r.afterJoin}`],
    ),
    '',
  ].join('\n'),
);
