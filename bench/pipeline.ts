/**
 * End-to-end pipeline benchmark: the six stages in one process (each its own exactly-once worker,
 * DGA scoring in a thread pool) on one local broker.
 *
 *   node --import tsx bench/pipeline.ts [--lines N] [--rate R] [--seconds S] [--infected H] [--txn-records N] [--port P] [--keep-broker]
 *
 * Defaults: 250,000 lines, two warm-up rounds and three counted ones (their median is the figure),
 * then the latency phase at 2,000 lines/s for 40 s with 16 infected hosts.
 *
 * Run it through bench/launch.js (`npm run bench:pipeline` does), which gives it the process a
 * relaunched `hamstring` runs in: libuv's pool of 16 threads (librdkafka's calls of six workers
 * queue behind each other in the default pool of 4, which alone cost two thirds of the throughput),
 * 32 MB semi-spaces, and jemalloc when the machine has it.
 *
 * --txn-records: records per batch of the logserver and the collector, without their commit interval (config.yaml: 500, spanned by a 200 ms commit interval).
 * --only throughput|latency: runs one phase.
 * --processes: the throughput phase runs each stage as a `hamstring run` process of its own (how a
 *   deployment runs them), so the stages no longer share one event loop; progress comes from each
 *   process's /metrics.
 * --rounds N: the throughput phase N times, then the median and range of lines/s (one run on a
 *   shared 2-core machine varies by 15 % either way). Default 3.
 * --warmup N: N more rounds first, printed but left out of the median. A broker just started spends
 *   its first minute compiling (the JIT took 2-3 times the broker's CPU a line of later rounds), and
 *   a long-running pipeline meets a warm one. Default 2: the broker's CPU a line settles in the
 *   third round (e.g. 84 -> 56 -> 38 -> 31 µs), so one warm-up left the first counted round low.
 * --trace: every 5 s, per stage: consumer lag, records in/out, transactions and their mean time, so
 *   the stage that holds the pipeline back shows (its lag grows while the ones after it idle).
 *
 * 1. Throughput: N generated lines are in the input topic before the stages start; lines/s = N over
 *    the time from the workers' start until the last record a stage consumed, once every consumer lag
 *    read 0 and no stage consumed anything for batch_timeout + 1 s (the collector's last batches
 *    leave on their timer, and the stages after it drain).
 *    Before each round the bench times the collector alone on 40,000 lines in memory and prints it
 *    as the machine's speed (collector lines per CPU-second): on this shared 2-core host the same
 *    code took up to a fifth more CPU time an hour later, and lines/s moved with it.
 * 2. Latency: traffic paced at R lines/s for S seconds with its event times on the wall clock; for
 *    each alert read from the external topic, the time from its host's newest line in the alert
 *    (that line's timestamp, when the feed sent it) to the alert's arrival (read_committed).
 *    --infected H: infected hosts among the 400 (the four default DGA families in turn), so that
 *    the percentiles rest on a few dozen alerts rather than the handful four hosts give.
 * The monitoring agent is not run: the stages' monitoring rows are written to Kafka in their
 * transactions as always, and ClickHouse is not on the measured path.
 * HAMSTRING_BENCH_BOOTSTRAP=host:port uses an existing broker (its pipeline topics are deleted first).
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { buildComponentStage } from '../src/app/builtin-stages.ts';
import { pipelineComponents } from '../src/stages/pipeline-components.ts';
import { runStages, type RunningStages } from '../src/app/run-stages.ts';
import { StageResources } from '../src/app/stage-resources.ts';
import { createStageTopics } from '../src/app/stage-topics.ts';
import { startTrafficFeed } from '../src/app/traffic-feed.ts';
import { machineSpeed } from './collector-workload.ts';
import { benchLines, writeInput } from './input-lines.ts';
import { procCpuSeconds } from './proc-cpu.ts';
import { startStageProcesses, type Progress } from './stage-processes.ts';
import { validateConfig, type HamstringConfig } from '../src/config/index.ts';
import { LocalKafkaCluster } from '../src/dev/kafka-cluster.ts';
import { createAdmin } from '../src/kafka/admin.ts';
import { createReadCommittedReader } from '../src/kafka/read-committed-reader.ts';
import { silentLogger } from '../src/observability/logger.ts';
import type { Stage } from '../src/runtime/index.ts';
import { decodeOutgoingAlert } from '../src/stages/alerter/index.ts';
import { timestampMicros } from '../src/stages/index.ts';
import { DEFAULT_FAMILIES, type GeneratedLine } from '../src/traffic/index.ts';
import { allocatorInUse } from './allocator.ts';

const { values: args } = parseArgs({
  options: {
    lines: { type: 'string', default: '250000' },
    rate: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '40' },
    port: { type: 'string', default: '25392' },
    'txn-records': { type: 'string' },
    'keep-broker': { type: 'boolean', default: false },
    trace: { type: 'boolean', default: false },
    only: { type: 'string' },
    processes: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '2' },
    infected: { type: 'string', default: '16' },
  },
});
const LINES = Number(args.lines);
const RATE = Number(args.rate);
const SECONDS = Number(args.seconds);
const INFECTED = Number(args.infected);
/** Latency phase: after the feed is done, this long with no alert and no stage consuming ends it. */
const LATENCY_QUIET_MS = 15_000;
const BATCH_TIMEOUT_S = 1;
/**
 * `--processes`: the stage processes' health ports are this and the next ones. Below Linux's
 * ephemeral range (32768-60999), where a client connection's local port once took one of them.
 */
const HEALTH_BASE_PORT = 29_500;
const dir = join('var', 'bench', 'pipeline');
const log = silentLogger();
const quiet = { ...process.env, HAMSTRING_LOG_LEVEL: 'warn' };

type Tree = Record<string, Record<string, unknown>>;

/** The shipped config.yaml with a 1 s batch_timeout, no alert file, on the bench's broker. */
function benchTree(bootstrap: string): Record<string, Tree> {
  const tree = parseYaml(readFileSync('config.yaml', 'utf8')) as Record<string, Tree>;
  const pipeline = tree.pipeline!;
  (pipeline.log_collection!.default_batch_handler_config as Record<string, unknown>).batch_timeout =
    BATCH_TIMEOUT_S;
  pipeline.alerting!.log_to_file = false;
  const environment = tree.environment as Record<string, unknown>;
  environment.kafka_bootstrap_servers = bootstrap;
  // A delivery-attempt topic of the bench's own: each phase deletes it, and on a shared broker
  // (HAMSTRING_BENCH_BOOTSTRAP, the tests') other workers keep the default one in use and recreate
  // it at once, so the wait for its deletion never ended.
  environment.record_errors = {
    ...(environment.record_errors as Record<string, unknown> | undefined),
    delivery_attempts_topic: 'hamstring_bench_delivery_attempts',
  };
  tree.runtime = { state: { dir: join(dir, 'state') } };
  const perTxn = args['txn-records'];
  if (perTxn !== undefined) {
    // The per-line stages commit a transaction per this many lines (config.yaml ships 50).
    const batch = tree.environment!.kafka_transaction_batch as { stages: Record<string, unknown> };
    for (const stage of ['logserver', 'collector']) batch.stages[stage] = { size: Number(perTxn) };
  }
  return tree;
}

/** Deletes the pipeline's topics and changelogs, so each phase starts empty. */
async function resetTopics(
  bootstrap: string,
  stages: readonly Stage[],
  topics: readonly string[],
  attemptTopic: string,
): Promise<void> {
  const admin = createAdmin(bootstrap, 'bench-reset');
  try {
    const existing = await admin.listTopics();
    // The delivery-attempt markers too: a round's stages would otherwise first read every marker
    // the earlier rounds wrote.
    const doomed = existing.filter(
      (t) =>
        topics.includes(t) ||
        t === attemptTopic ||
        stages.some((s) => t.startsWith(`${s.name}-`) && t.endsWith('-changelog')),
    );
    if (doomed.length > 0) await admin.deleteTopics(doomed);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const left = (await admin.listTopics()).filter((t) => doomed.includes(t));
      if (left.length === 0) break;
      if (Date.now() > deadline)
        throw new Error(
          `bench: topics still there 60 s after their deletion (recreated by another client?): ${left.join(', ')}`,
        );
      await sleep(500);
    }
  } finally {
    admin.close();
  }
  rmSync(join(dir, 'state'), { recursive: true, force: true });
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/** One line per stage: lag, records in/out, commits and mean transaction ms since the last call. */
async function trace(
  running: RunningStages,
  names: readonly string[],
  seen: Map<string, number[]>,
  seconds: number,
): Promise<void> {
  const parts: string[] = [];
  for (const [i, w] of running.workers.entries()) {
    const m = w.metrics;
    const lag = (await m.lag.get()).values[0]?.value ?? 0;
    const records = (await m.records.get()).values;
    const dir = (d: string) => records.find((v) => v.labels.direction === d)?.value ?? 0;
    const commits = (await m.commits.get()).values.reduce((sum, v) => sum + v.value, 0);
    const txn = (await m.transactionSeconds.get()).values;
    const txnSum = txn.find((v) => v.metricName?.endsWith('_sum'))?.value ?? 0;
    const now = [dir('in'), dir('out'), commits, txnSum];
    const was = seen.get(String(i)) ?? [0, 0, 0, 0];
    seen.set(String(i), now);
    const d = now.map((v, k) => v - was[k]!);
    const name = (names[i] ?? String(i)).slice(0, 9);
    parts.push(
      `${name} lag ${lag} in ${d[0]} out ${d[1]} txn ${d[2]} (${d[2]! > 0 ? ((d[3]! / d[2]!) * 1000).toFixed(0) : '-'} ms)`,
    );
  }
  console.log(`  [${seconds.toFixed(0)} s] ${parts.join(' | ')}`);
}

/** The broker's CPU since `before` per line: with the stages' own, what a line costs the machine. */
/**
 * Runs one step of a phase, saying on stderr what it waits for when it takes longer than 20 s: a run
 * killed by its caller's timeout then shows where it stood.
 */
async function step<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const began = Date.now();
  const slow = setInterval(
    () => console.error(`[bench] still ${what} after ${Math.round((Date.now() - began) / 1000)} s`),
    20_000,
  );
  try {
    return await fn();
  } finally {
    clearInterval(slow);
  }
}

function printBrokerCpu(before: number, lines: number): void {
  if (brokerPid === undefined) return;
  const seconds = procCpuSeconds(brokerPid) - before;
  console.log(
    `  CPU of the broker: ${seconds.toFixed(1)} s (${((seconds / lines) * 1e6).toFixed(0)} µs per line)`,
  );
}

/**
 * Progress of the stages in this process, in the shape `StageProcesses.progress` gives for stage
 * processes: the sum of their consumer lags, the records the first stage (the logserver) consumed, and
 * the records all stages consumed.
 */
async function progressOf(running: RunningStages): Promise<Progress> {
  let lag = 0;
  let firstIn = 0;
  let allIn = 0;
  for (const [i, w] of running.workers.entries()) {
    lag += (await w.metrics.lag.get()).values[0]?.value ?? 0;
    let recordsIn = 0;
    for (const v of (await w.metrics.records.get()).values)
      if (v.labels.direction === 'in') recordsIn += v.value;
    if (i === 0) firstIn = recordsIn;
    allIn += recordsIn;
  }
  return { lag, firstIn, allIn };
}

/**
 * Polls `progress` every `pollMs` until the round is over and returns when the pipeline was last
 * busy: the first stage has consumed all `sent` lines, and for batch_timeout + 1 s no lag read above
 * 0 and no stage consumed a record (the collector's last batches leave on their timer, and the
 * stages after it drain). Records consumed count as well as lag: the lag gauges are sampled once a
 * second, and the last batches cross the stages after the collector in less than that, so lag alone
 * ended a round 1.2-1.8 s before its last stage consumed its last record. `each` runs before every
 * poll; past `limitMs` from `began` it throws.
 */
async function lastBusyOf(o: {
  sent: number;
  began: number;
  pollMs: number;
  progress: () => Promise<Progress>;
  each?: () => Promise<void>;
  limitMs?: number;
}): Promise<number> {
  let lastBusy = Date.now();
  let firstIn = 0;
  let seenIn = 0;
  while (Date.now() - lastBusy < (BATCH_TIMEOUT_S + 1) * 1000 || firstIn < o.sent) {
    await sleep(o.pollMs);
    await o.each?.();
    const now = await o.progress();
    firstIn = now.firstIn;
    if (now.lag > 0 || firstIn < o.sent || now.allIn !== seenIn) lastBusy = Date.now();
    seenIn = now.allIn;
    if (o.limitMs !== undefined && Date.now() - o.began > o.limitMs)
      throw new Error(`no end after ${o.limitMs / 1000} s: ${JSON.stringify(now)}`);
  }
  return lastBusy;
}

/** Starts the stages (topics created) and returns them with what must be closed after. */
async function start(
  config: HamstringConfig,
): Promise<{ running: RunningStages; resources: StageResources; names: string[] }> {
  const resources = new StageResources();
  const stages: Stage[] = [];
  for (const c of pipelineComponents(config))
    stages.push(await buildComponentStage(config, c.kind, { component: c.name, resources }));
  await createStageTopics(config, stages, { partitions: 3 });
  const running = await runStages({ config, stages, signals: [], log, env: quiet });
  return { running, resources, names: stages.map((s) => s.shortName ?? s.name) };
}

async function prepare(config: HamstringConfig, bootstrap: string): Promise<void> {
  const resources = new StageResources();
  const stages: Stage[] = [];
  for (const c of pipelineComponents(config))
    stages.push(await buildComponentStage(config, c.kind, { component: c.name, resources }));
  const { stageTopics } = await import('../src/app/stage-topics.ts');
  await resetTopics(
    bootstrap,
    stages,
    [...stageTopics(config, stages), config.pipeline.alerting.external_kafka_topic],
    config.environment.record_errors.delivery_attempts_topic,
  );
  await createStageTopics(config, stages, { partitions: 3 });
  await resources.close();
}

/** Writes the throughput phase's lines to the input topic; returns how many arrived. */
async function seedInput(config: HamstringConfig, lines: readonly GeneratedLine[]): Promise<number> {
  const seeding = Date.now();
  const sent = await writeInput(config, lines, log);
  console.log(`input: ${sent} lines written in ${((Date.now() - seeding) / 1000).toFixed(1)} s`);
  return sent;
}

/** Lines/s of each throughput round. */
const rounds: number[] = [];
/** The machine's speed before each round (collector lines per CPU-second, in memory). */
const speeds: number[] = [];

async function throughput(config: HamstringConfig, bootstrap: string): Promise<void> {
  await prepare(config, bootstrap);
  const speed = machineSpeed();
  speeds.push(speed);
  console.log(`machine: ${Math.round(speed)} collector lines per CPU-second (in memory, no Kafka)`);
  const lines = benchLines(LINES);
  if (args.processes) return throughputInProcesses(config, lines);
  const sent = await seedInput(config, lines);
  const began = Date.now();
  const cpuBefore = process.cpuUsage();
  const brokerBefore = procCpuSeconds(brokerPid);
  const mainBefore = procCpuSeconds(process.pid, process.pid);
  const { running, resources, names } = await start(config);
  const seen = new Map<string, number[]>();
  let traced = Date.now();
  const lastBusy = await lastBusyOf({
    sent,
    began,
    pollMs: 100,
    progress: () => progressOf(running),
    each: async () => {
      if (!args.trace || Date.now() - traced < 5000) return;
      traced = Date.now();
      await trace(running, names, seen, (traced - began) / 1000);
    },
  });
  const seconds = (lastBusy - began) / 1000;
  console.log(
    `throughput: ${sent} lines through six stages in ${seconds.toFixed(1)} s (from worker start, incl. restore and the last batch_timeout of ${BATCH_TIMEOUT_S} s)`,
  );
  console.log(`  lines/s: ${Math.round(sent / seconds)}`);
  rounds.push(sent / seconds);
  // CPU per line depends far less on what else the machine runs than lines/s does.
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const main = procCpuSeconds(process.pid, process.pid) - mainBefore;
  console.log(
    `  CPU of this process: ${cpuSeconds.toFixed(1)} s (${((cpuSeconds / sent) * 1e6).toFixed(0)} µs per line), of its main thread ${main.toFixed(1)} s (${((main / sent) * 1e6).toFixed(0)} µs per line, ${((main / seconds) * 100).toFixed(0)} % busy)`,
  );
  printBrokerCpu(brokerBefore, sent);
  await step('throughput: stopping the stages', () => running.stop());
  await step('throughput: closing the shared resources', () => resources.close());
}

/** The throughput phase with each stage in a `hamstring run` process of its own. */
async function throughputInProcesses(
  config: HamstringConfig,
  lines: readonly GeneratedLine[],
): Promise<void> {
  // The input is in its topic before the stages start, as in one process: written during the round,
  // its producer took a tenth of the machine from the stages. Loading the TypeScript sources costs
  // each process seconds of CPU that a long-running deployment pays once: the stages after the
  // logserver are up before it starts, and the round is timed from the moment before the logserver
  // served /metrics (its worker had not started then).
  const sent = await seedInput(config, lines);
  const stages = startStageProcesses(
    tree,
    pipelineComponents(config).map((c) => [c]),
    dir,
    HEALTH_BASE_PORT,
  );
  const began = await stages.started(120_000);
  const cpuBefore = stages.cpuSeconds();
  const byStageBefore = stages.cpuByStage();
  const brokerBefore = procCpuSeconds(brokerPid);
  let lastBusy = began;
  try {
    lastBusy = await lastBusyOf({
      sent,
      began,
      pollMs: 200,
      progress: () => stages.progress(),
      limitMs: 600_000,
    });
  } finally {
    const cpuSeconds = stages.cpuSeconds() - cpuBefore;
    const byStage = [...stages.cpuByStage()].map(
      ([stage, total]) => `${stage} ${(((total - (byStageBefore.get(stage) ?? 0)) / sent) * 1e6).toFixed(0)}`,
    );
    await stages.stop();
    const seconds = (lastBusy - began) / 1000;
    console.log(
      `throughput: ${sent} lines through six stages, one process each, in ${seconds.toFixed(1)} s (from the logserver's start, the other stages up before it; incl. the last batch_timeout of ${BATCH_TIMEOUT_S} s)`,
    );
    console.log(`  lines/s: ${Math.round(sent / seconds)}`);
    rounds.push(sent / seconds);
    console.log(
      `  CPU of the stage processes: ${cpuSeconds.toFixed(1)} s (${((cpuSeconds / sent) * 1e6).toFixed(0)} µs per line: ${byStage.join(', ')})`,
    );
    printBrokerCpu(brokerBefore, sent);
  }
}

async function latency(config: HamstringConfig, bootstrap: string): Promise<void> {
  await step('latency: preparing the topics', () => prepare(config, bootstrap));
  const { running, resources } = await step('latency: starting the stages', () => start(config));
  const reader = createReadCommittedReader({ bootstrap, clientId: 'bench-alerts' });
  await step('latency: connecting the alert reader', () => reader.connect(30_000));
  reader.subscribe([config.pipeline.alerting.external_kafka_topic]);
  const feed = await startTrafficFeed({
    config,
    log,
    seed: 9,
    rate: RATE,
    durationSeconds: SECONDS,
    hosts: 400,
    families: Array.from({ length: INFECTED }, (_, i) => DEFAULT_FAMILIES[i % DEFAULT_FAMILIES.length]!),
  });
  /** Each alert's delay and what it was: with ~40 alerts a run, p99 is the slowest one, worth naming. */
  const alerts: { ms: number; detector: string; host: string; warnings: number }[] = [];
  const deadline = Date.now() + (SECONDS + 180) * 1000;
  // The last alerts follow the last line within batch_timeout and a few commits of the stage that
  // last consumed; once the feed is done, a quiet spell far longer than that, counted from the last
  // alert and the last record any stage consumed, ends the phase. On a loaded host the stages fall
  // behind the feed by tens of seconds, so a spell counted from the feed's end alone cut the phase
  // off before the first alert.
  let fedAt: number | undefined;
  const fed = () => (fedAt = Date.now());
  // A feed that failed is done too; feed.stop() below reports why.
  void feed.done.then(fed, fed);
  let lastAlert = 0;
  let lastMoved = 0;
  let seenIn = -1;
  while (Date.now() < deadline) {
    const now = await progressOf(running);
    if (now.lag > 0 || now.allIn !== seenIn) lastMoved = Date.now();
    seenIn = now.allIn;
    if (fedAt !== undefined && Date.now() - Math.max(fedAt, lastAlert, lastMoved) > LATENCY_QUIET_MS) break;
    for (const r of await reader.consume(1000, 200)) {
      const alert = decodeOutgoingAlert(r.value);
      const newest = Math.max(...alert.result.map((w) => timestampMicros(w.request.ts) / 1000));
      lastAlert = Date.now();
      alerts.push({
        ms: lastAlert - newest,
        detector: alert.detector_name,
        host: alert.src_ip,
        warnings: alert.result.length,
      });
    }
  }
  await step('latency: stopping the feed', () => feed.stop());
  await step('latency: closing the alert reader', () => reader.close(10_000));
  await step('latency: stopping the stages', () => running.stop());
  await step('latency: closing the shared resources', () => resources.close());
  alerts.sort((a, b) => a.ms - b.ms);
  /** `sorted`'s value at quantile `p` (ascending, NaN when empty). */
  const q = (sorted: readonly { ms: number }[], p: number) =>
    (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]?.ms ?? NaN).toFixed(0);
  console.log(
    `latency: ${alerts.length} alerts at ${RATE} lines/s for ${SECONDS} s (batch_timeout ${BATCH_TIMEOUT_S} s)`,
  );
  console.log(
    `  line in to alert out ms: p50 ${q(alerts, 0.5)}  p99 ${q(alerts, 0.99)}  max ${q(alerts, 1)}`,
  );
  // The filing's figure (1,932 ms) had only the DGA path; the shipped config also runs the tunnel path.
  for (const detector of [...new Set(alerts.map((a) => a.detector))].sort()) {
    const own = alerts.filter((a) => a.detector === detector);
    console.log(`  ${detector}: ${own.length} alerts, p50 ${q(own, 0.5)}  p99 ${q(own, 0.99)} ms`);
  }
  const named = alerts.slice(-3).reverse();
  console.log(
    `  slowest: ${named.map((a) => `${a.ms.toFixed(0)} ms (${a.detector}, ${a.host}, ${a.warnings} warnings)`).join('; ')}`,
  );
}

console.log(`libuv thread pool: ${process.env.UV_THREADPOOL_SIZE ?? '4 (default; hamstring runs with 16)'}`);
console.log(`allocator: ${allocatorInUse()}`);
const external = process.env.HAMSTRING_BENCH_BOOTSTRAP;
const cluster = external
  ? undefined
  : await LocalKafkaCluster.start({
      nodes: 1,
      dataDir: join('var', 'bench', 'pipeline-kafka'),
      basePort: Number(args.port),
    });
const bootstrap = external ?? cluster!.bootstrapServers;
const brokerPid = cluster?.pidOf(cluster.nodeIds()[0]!);
const tree = benchTree(bootstrap);
const config = validateConfig(tree);
try {
  if (args.only !== 'latency') {
    for (let round = 0; round < Number(args.warmup); round += 1) {
      console.log(`warm-up round ${round + 1} (not counted):`);
      await throughput(config, bootstrap);
    }
    rounds.length = 0;
    speeds.length = 0;
    for (let round = 0; round < Number(args.rounds); round += 1) await throughput(config, bootstrap);
    if (rounds.length > 1) {
      const sorted = [...rounds].sort((a, b) => a - b);
      const median = sorted[Math.floor((sorted.length - 1) / 2)]!;
      console.log(
        `throughput over ${sorted.length} rounds: median ${Math.round(median)} lines/s (${sorted.map(Math.round).join(', ')})`,
      );
      const bySpeed = [...speeds].sort((a, b) => a - b);
      console.log(
        `machine over those rounds: ${bySpeed.map(Math.round).join(', ')} collector lines per CPU-second`,
      );
    }
  }
  if (args.only !== 'throughput') await latency(config, bootstrap);
} finally {
  if (cluster && !args['keep-broker']) await cluster.stop();
}
