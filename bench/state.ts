/**
 * State store benchmark on a real 1-node broker: a counting stage (sum per key in a store), alone
 * and with a 100 ms commit interval, against the same stage stateless, the restore rate, and restart-to-first-commit with a large store after
 * a clean stop, after kill -9 and with no local copy. See bench/README.md ("State benchmark").
 *
 *   node --import tsx bench/state.ts [--quick] [--records N] [--keys N] [--port P] [--keep-broker]
 *
 * Every worker runs in a child process (this file with --worker), so a kill -9 is a real one and the
 * bench's own producer does not share the worker's event loop.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createProducer } from '../src/kafka/producer.ts';
import { silentLogger } from '../src/observability/logger.ts';
import { TransactionalWorker } from '../src/runtime/worker/transactional-worker.ts';
import { createTopics, testKafkaOptions } from '../test/support/pipeline-harness.ts';
import { countingStage, statelessStage } from '../test/support/state-stages.ts';
import { obtainBroker } from './bench-broker.ts';

const PARTITIONS = 6;
const BATCH_SIZE = 500;
/** The commit interval of the third throughput run (`kafka_transaction_batch.stages.<stage>.commit_interval_ms`). */
const SPAN_MS = 100;

interface ChildConfig {
  bootstrap: string;
  input: string;
  output: string;
  group: string;
  instance: string;
  stateDir: string;
  stateful: boolean;
  /** One transaction spans the batches of this many ms (a commit interval); absent: one per batch. */
  commitIntervalMs?: number;
  /** Records committed by this worker after which it reports `done`. */
  target: number;
}

type ChildMessage =
  | { type: 'first-commit'; sinceStartMs: number; sinceSpawnMs: number }
  | { type: 'done'; elapsedMs: number; cpuMs: number; restore: RestoreFigures }
  | { type: 'committed'; records: number };

interface RestoreFigures {
  changelogRecords: number;
  localRecords: number;
  seconds: number;
}

const log = (m: string) => process.stderr.write(`${m}\n`);
const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

// ---------------------------------------------------------------------------------------------
// Child: one worker.
// ---------------------------------------------------------------------------------------------

async function child(c: ChildConfig, spawnedAt: number): Promise<void> {
  const send = (m: ChildMessage) => process.send?.(m);
  let committed = 0;
  let firstFetchAt: number | undefined;
  let cpuAtFirstFetch: NodeJS.CpuUsage | undefined;
  let startAt = 0;
  const stage = c.stateful
    ? countingStage(c.input, c.output, c.group)
    : statelessStage(c.input, c.output, c.group);
  const worker = new TransactionalWorker({
    stage: {
      ...stage,
      process: (records, ctx) => {
        firstFetchAt ??= performance.now();
        cpuAtFirstFetch ??= process.cpuUsage();
        return stage.process(records, ctx);
      },
    },
    instanceId: c.instance,
    mode: 'exactly-once',
    kafka: testKafkaOptions(c.bootstrap, { transactionTimeoutMs: 60_000, messageTimeoutMs: 30_000 }),
    batch: { size: BATCH_SIZE, timeoutMs: 50 },
    ...(c.commitIntervalMs ? { commitInterval: { maxMs: c.commitIntervalMs } } : {}),
    state: { dir: c.stateDir, replicationFactor: 1 },
    // The transaction path alone, as bench/README.md's history measured it: no delivery-attempt store.
    attemptStore: false,
    log: silentLogger(),
    hooks: {
      afterCommit: async ({ records }) => {
        if (committed === 0)
          send({
            type: 'first-commit',
            sinceStartMs: performance.now() - startAt,
            sinceSpawnMs: Date.now() - spawnedAt,
          });
        committed += records;
        send({ type: 'committed', records: committed });
        if (committed >= c.target && committed - records < c.target) {
          const m = await worker.metrics.registry.getMetricsAsJSON();
          // Histogram values come as _bucket, _sum and _count; only the counters' and the _sum count.
          const sum = (name: string, source?: string) =>
            (m.find((x) => x.name === name)?.values ?? [])
              .filter((v) => source === undefined || v.labels.source === source)
              .filter((v) => {
                const n = (v as { metricName?: string }).metricName ?? name;
                return n === name || n.endsWith('_sum');
              })
              .reduce((s, v) => s + v.value, 0);
          send({
            type: 'done',
            elapsedMs: performance.now() - (firstFetchAt ?? startAt),
            cpuMs: cpuMs(process.cpuUsage(cpuAtFirstFetch)),
            restore: {
              changelogRecords: sum('hamstring_state_restored_records_total', 'changelog'),
              localRecords: sum('hamstring_state_restored_records_total', 'local'),
              seconds: sum('hamstring_state_restore_seconds'),
            },
          });
        }
      },
    },
  });
  process.on('SIGTERM', () => void worker.stop().then(() => process.exit(0)));
  startAt = performance.now();
  await worker.start();
  await worker.done();
}

// ---------------------------------------------------------------------------------------------
// Parent: scenarios.
// ---------------------------------------------------------------------------------------------

class Worker {
  readonly proc: ChildProcess;
  firstCommit: Promise<{ sinceStartMs: number; sinceSpawnMs: number }>;
  done: Promise<{ elapsedMs: number; cpuMs: number; restore: RestoreFigures }>;
  committed = 0;

  constructor(c: ChildConfig) {
    this.proc = fork(fileURLToPath(import.meta.url), ['--worker', JSON.stringify(c), String(Date.now())], {
      execArgv: ['--import', 'tsx'],
      env: { ...process.env, UV_THREADPOOL_SIZE: '16' },
    });
    let first: (v: { sinceStartMs: number; sinceSpawnMs: number }) => void = () => undefined;
    let finished: (v: { elapsedMs: number; cpuMs: number; restore: RestoreFigures }) => void = () =>
      undefined;
    this.firstCommit = new Promise((r) => (first = r));
    this.done = new Promise((r) => (finished = r));
    this.proc.on('message', (m: ChildMessage) => {
      if (m.type === 'first-commit') first(m);
      else if (m.type === 'done') finished(m);
      else this.committed = m.records;
    });
  }

  async stop(signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    const exit = new Promise((r) => this.proc.once('exit', r));
    this.proc.kill(signal);
    await exit;
  }
}

async function seedKeys(bootstrap: string, topic: string, from: number, count: number, keys: number) {
  const p = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'bench-seed',
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: 60_000,
      apiTimeoutMs: 30_000,
    },
    silentLogger(),
  );
  await p.connect(30_000);
  for (let i = from; i < from + count; i += 1) await p.produce({ topic, key: `k-${i % keys}`, value: '1' });
  await p.flush(120_000);
  const t = p.tally();
  await p.close(10_000);
  if (t.failed > 0) throw new Error(`seeding failed for ${t.failed} records`);
}

const run = Date.now().toString(36);
let topicSeq = 0;
const name = (p: string) => `bench-state-${p}-${run}-${(topicSeq += 1)}`;

/** Records per second of one worker over `input` (first fetch to last commit), and its CPU time. */
async function throughput(
  bootstrap: string,
  input: string,
  records: number,
  stateful: boolean,
  stateDir: string,
  commitIntervalMs?: number,
): Promise<{ perSecond: number; cpuUsPerRecord: number }> {
  const output = name('out');
  await createTopics(bootstrap, [output], PARTITIONS);
  const group = name(stateful ? (commitIntervalMs ? 'counting-span' : 'counting') : 'stateless');
  const w = new Worker({
    bootstrap,
    input,
    output,
    group,
    instance: '0',
    stateDir,
    stateful,
    ...(commitIntervalMs ? { commitIntervalMs } : {}),
    target: records,
  });
  const done = await w.done;
  await w.stop('SIGTERM');
  return { perSecond: records / (done.elapsedMs / 1000), cpuUsPerRecord: (done.cpuMs * 1000) / records };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      records: { type: 'string' },
      keys: { type: 'string' },
      port: { type: 'string', default: process.env.HAMSTRING_BENCH_KAFKA_PORT ?? '25092' },
      'keep-broker': { type: 'boolean', default: false },
    },
  });
  const records = Number(values.records ?? (values.quick ? 50_000 : 200_000));
  const bigKeys = Number(values.keys ?? (values.quick ? 100_000 : 1_000_000));
  const broker = await obtainBroker(Number(values.port), values['keep-broker'], log);
  const stateDir = mkdtempSync(join(tmpdir(), 'hamstring-bench-state-'));
  const bootstrap = broker.bootstrap;
  try {
    // 1. Throughput, counting (10k keys) against stateless, over the same input.
    const input = name('in');
    await createTopics(bootstrap, [input], PARTITIONS);
    log(`seeding ${records} records over 10 000 keys`);
    await seedKeys(bootstrap, input, 0, records, 10_000);
    // Alternating rounds, medians: a shared machine's load shifts between runs.
    const runs = {
      stateless: [] as number[],
      counting: [] as number[],
      spanning: [] as number[],
      cpuS: [] as number[],
      cpuC: [] as number[],
      cpuSpan: [] as number[],
    };
    for (let round = 0; round < 3; round++) {
      const a = await throughput(bootstrap, input, records, false, stateDir);
      const b = await throughput(bootstrap, input, records, true, stateDir);
      const c = await throughput(bootstrap, input, records, true, stateDir, SPAN_MS);
      runs.stateless.push(a.perSecond);
      runs.counting.push(b.perSecond);
      runs.spanning.push(c.perSecond);
      runs.cpuS.push(a.cpuUsPerRecord);
      runs.cpuC.push(b.cpuUsPerRecord);
      runs.cpuSpan.push(c.cpuUsPerRecord);
      log(
        `round ${round + 1}: stateless ${a.perSecond.toFixed(0)}/s, counting ${b.perSecond.toFixed(0)}/s, ` +
          `counting with a ${SPAN_MS} ms commit interval ${c.perSecond.toFixed(0)}/s`,
      );
    }
    const stateless = median(runs.stateless);
    const counting = median(runs.counting);
    const spanning = median(runs.spanning);
    console.log(`throughput stateless            ${stateless.toFixed(0)} records/s (median of 3)`);
    console.log(`throughput counting (10k keys)  ${counting.toFixed(0)} records/s (median of 3)`);
    console.log(
      `throughput counting, commit interval ${SPAN_MS} ms  ${spanning.toFixed(0)} records/s (median of 3)`,
    );
    console.log(`counting / stateless            ${(counting / stateless).toFixed(2)}x (target >= 0.7x)`);
    console.log(`counting, commit interval ${SPAN_MS} ms / stateless  ${(spanning / stateless).toFixed(2)}x`);
    console.log(
      `worker CPU per record           stateless ${median(runs.cpuS).toFixed(1)} us, ` +
        `counting ${median(runs.cpuC).toFixed(1)} us, ` +
        `counting with commit interval ${median(runs.cpuSpan).toFixed(1)} us`,
    );

    // 2. A store of `bigKeys` keys: built once, then restarted three ways.
    const bigIn = name('big-in');
    const bigOut = name('big-out');
    const group = name('big');
    await createTopics(bootstrap, [bigIn, bigOut], PARTITIONS);
    log(`seeding ${bigKeys} records with distinct keys`);
    await seedKeys(bootstrap, bigIn, 0, bigKeys, bigKeys);
    const cfg = { bootstrap, input: bigIn, output: bigOut, group, stateDir, stateful: true };
    const builder = new Worker({ ...cfg, instance: 'a', target: bigKeys });
    const built = await builder.done;
    log(`built a store of ${bigKeys} keys in ${(built.elapsedMs / 1000).toFixed(1)} s`);
    await builder.stop('SIGTERM');

    // After a clean stop: the local copy and no tail. One new record makes the first commit.
    await seedKeys(bootstrap, bigIn, bigKeys, 1, bigKeys);
    const clean = new Worker({ ...cfg, instance: 'a', target: 1 });
    const cleanFirst = await clean.firstCommit;
    const cleanDone = await clean.done;
    console.log(
      `restart to first commit, ${bigKeys} keys, clean stop   ${(cleanFirst.sinceStartMs / 1000).toFixed(2)} s ` +
        `(${(cleanFirst.sinceSpawnMs / 1000).toFixed(2)} s from process spawn; local ${cleanDone.restore.localRecords}, ` +
        `changelog tail ${cleanDone.restore.changelogRecords} records; target <= 5 s)`,
    );

    // After kill -9 mid-stream: whatever the local copy holds, plus the tail.
    await seedKeys(bootstrap, bigIn, bigKeys + 1, 20_000, bigKeys);
    await new Promise<void>((resolve) => {
      const t = setInterval(() => {
        if (clean.committed >= 5_000) {
          clearInterval(t);
          resolve();
        }
      }, 20);
    });
    await clean.stop('SIGKILL');
    await seedKeys(bootstrap, bigIn, bigKeys + 20_001, 1, bigKeys);
    const killed = new Worker({ ...cfg, instance: 'a', target: 1 });
    const killedFirst = await killed.firstCommit;
    const killedDone = await killed.done;
    console.log(
      `restart to first commit, ${bigKeys} keys, after kill -9  ${(killedFirst.sinceStartMs / 1000).toFixed(2)} s ` +
        `(local ${killedDone.restore.localRecords}, changelog tail ${killedDone.restore.changelogRecords} records)`,
    );
    await killed.stop('SIGTERM');

    // No local copy: the whole changelog, which gives the restore rate.
    const fresh = new Worker({ ...cfg, instance: 'fresh', target: 1 });
    await seedKeys(bootstrap, bigIn, bigKeys + 20_002, 1, bigKeys);
    const freshFirst = await fresh.firstCommit;
    const freshDone = await fresh.done;
    const rate = freshDone.restore.changelogRecords / freshDone.restore.seconds;
    console.log(
      `restart to first commit, ${bigKeys} keys, no local copy ${(freshFirst.sinceStartMs / 1000).toFixed(2)} s ` +
        `(changelog ${freshDone.restore.changelogRecords} records in ${freshDone.restore.seconds.toFixed(2)} s)`,
    );
    console.log(`restore rate from the changelog  ${rate.toFixed(0)} keys/s`);
    await fresh.stop('SIGTERM');
  } finally {
    rmSync(stateDir, { recursive: true, force: true });
    await broker.release();
  }
}

const i = process.argv.indexOf('--worker');
if (i >= 0) await child(JSON.parse(process.argv[i + 1]!) as ChildConfig, Number(process.argv[i + 2]));
else await main();
