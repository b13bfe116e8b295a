/**
 * Runs the integration tests against fresh run-wide services:
 *
 *   node --import tsx scripts/run-integration-tests.ts [--long] [--jobs=N] [--record-durations]
 *     [node --test flags] [files or globs]
 *
 * `--long` (npm run test:long) runs the long variants of the proofs that have one: it sets
 * HAMSTRING_TEST_LONG=1 (test/helpers/long-run.ts) and, without files, runs the files of LONG_PROOFS
 * and LONG_ONLY (which the default run leaves out; a file named on the command line always runs).
 * `--jobs=N` (or HAMSTRING_IT_JOBS) runs up to N files at once (default 4); which files may run
 * together is scripts/integration-lanes.ts. `--record-durations` writes this run's per-file
 * durations into the committed test/durations.tsv (scripts/integration-durations.ts), which every
 * run reads to start the longest files first.
 *
 * Starts a 1-node Kafka (base port 19092, var/test/kafka) and ClickHouse (HTTP 18123, TCP 19000,
 * var/test/clickhouse) in parallel, wiped first; exports HAMSTRING_TEST_KAFKA_DIR and
 * HAMSTRING_TEST_CLICKHOUSE_DIR for the fixtures in test/helpers; runs each file in a node --test
 * process of its own, prints its output in one piece when it ends (and keeps it in
 * var/test/logs/), and ends with each file's duration, longest first; always stops both services
 * (also on SIGINT/SIGTERM) and exits with the tests' exit code.
 * Globs are expanded here because Node 20's test runner does not expand them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { LocalClickHouse } from '../src/dev/clickhouse-server.ts';
import { LocalKafkaCluster } from '../src/dev/kafka-cluster.ts';
import { projectRoot } from '../src/dev/paths.ts';
import { DURATIONS_FILE, readDurations, recordDurations } from './integration-durations.ts';
import { HEAVY, laneOf, mayStart, type Lane } from './integration-lanes.ts';

const KAFKA_DIR = join(projectRoot, 'var', 'test', 'kafka');
const CLICKHOUSE_DIR = join(projectRoot, 'var', 'test', 'clickhouse');
const LOG_DIR = join(projectRoot, 'var', 'test', 'logs');
// Overridable so that two runs on one machine (e.g. a developer's and a clean-clone CI check) coexist.
const KAFKA_BASE_PORT = Number(process.env.HAMSTRING_IT_KAFKA_PORT ?? 19092);
const CLICKHOUSE_HTTP_PORT = Number(process.env.HAMSTRING_IT_CLICKHOUSE_HTTP_PORT ?? 18123);
const CLICKHOUSE_TCP_PORT = Number(process.env.HAMSTRING_IT_CLICKHOUSE_TCP_PORT ?? 19000);
const DEFAULT_PATTERN = 'test/integration/**/*.test.ts';
/** The longest a file may take (its tests' own timeout is 10 min; this covers set-up and exit too). */
const FILE_TIMEOUT_MS = 12 * 60_000;
/**
 * Files run at once: on 2 cores most integration files wait on Kafka's timeouts, not on the CPU
 * (a run at 4 used the two cores about 80 % of its wall time). At 5 the demo's monitoring agent
 * once lagged past what its test allows; since the agent inserts 1,000 rows at a time instead of
 * 50, a clean-clone run at 5 passed in 533 s of integration against 594 s at 4. At most MAX_HEAVY
 * of them are CPU-heavy (scripts/integration-lanes.ts).
 */
const DEFAULT_JOBS = 5;
/**
 * The files whose proofs have a long variant (`longOr` of test/helpers/long-run.ts). The default run
 * does the short variant of each (the same guarantee on less work); `--long` does the full one.
 */
const LONG_PROOFS: readonly string[] = [
  // Four rounds of fencing the broker to catch a stranded client (one in the default run).
  'test/integration/kafka/stranded-clients.test.ts',
  // 12,000 lines and two kills -9 of the collector process (6,000 and one kill by default).
  'test/integration/pipeline/collector-kill.test.ts',
  // 100,000 hostile lines among 3,000 valid ones (3,000 by default: fewer saved no measurable time).
  'test/integration/pipeline/hostile-lines.test.ts',
  // Network cuts of 4 s and 20 s under 40 s of load (one 12 s cut under 25 s by default).
  'test/integration/verify/network-cut.test.ts',
  // 300 start/commit/SIGTERM cycles of a worker process (10 by default).
  'test/integration/runtime/stop-loop.test.ts',
  // `hamstring verify`'s smoke scenario at its own pace (54 s of load; 30 s by default).
  'test/integration/verify/verify-smoke.test.ts',
  // A counting stage killed -9 four times over 50,000 records (twice over 10,000 by default).
  'test/integration/state/exactly-once-state.test.ts',
];
/**
 * Files only `--long` runs: proofs whose fault depends on timing that a loaded run does not give
 * every time, so the default run would fail now and then for a reason that is not a defect.
 */
const LONG_ONLY: readonly string[] = [
  // Needs a SIGSTOP of its broker to catch a transactional call in flight so that its producer is
  // abandoned; a pause that catches a poll instead only reconnects (the test then cannot prove its
  // point and times out).
  'test/integration/runtime/abandoned-producer-exit.test.ts',
  // Two whole pipelines replaying 19,200 lines each, fast and paced, to compare their alerts: the
  // default run's most CPU (a minute of the two cores) for a property of the window logic that
  // test/unit/stages/detector/warning-window.test.ts checks on every run (batches cut otherwise,
  // warnings reordered within the lateness); end-to-end and collector-kill prove the alerts through
  // the real pipeline.
  'test/integration/pipeline/replay-speed.test.ts',
  // The whole pipeline as eleven processes, twice (with and without faults): about 4 min of both
  // cores, which slowed every file beside it. The accounting it rests on runs in the default suite
  // on a fault-free pipeline (verify/pipeline-accounting.test.ts); `hamstring verify --pipeline`
  // runs it for any seed.
  'test/integration/verify/pipeline-verify.test.ts',
  // Three simulated machines (3 JVMs, 18 stage processes) and a machine cut off for 25 s: about
  // 6 min of both cores; `npm run test:cluster` runs it alone.
  'test/integration/cluster/machine-loss.test.ts',
  // A million lines of hostile input after 200,000 clean ones through the whole pipeline: about half
  // an hour of both cores (SLOW_FILES); the collector's own hostile-lines proof runs by default.
  'test/integration/verify/pipeline-hostile.test.ts',
];
/** Files that take longer than FILE_TIMEOUT_MS in `--long`, and what they may take instead. */
const SLOW_FILES: Readonly<Record<string, number>> = {
  'test/integration/verify/pipeline-hostile.test.ts': 60 * 60_000,
};
const SIGNAL_EXIT: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

const log = (line: string): void => void process.stderr.write(`[integration] ${line}\n`);
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

let kafka: LocalKafkaCluster | undefined;
let clickhouse: LocalClickHouse | undefined;
const children = new Set<ChildProcess>();
let signalled: NodeJS.Signals | undefined;
let stopping: Promise<void> | undefined;

function onSignal(signal: NodeJS.Signals): void {
  if (signalled) return;
  signalled = signal;
  log(`${signal}: stopping the tests, then the services`);
  for (const child of children) {
    killGroup(child, signal);
    setTimeout(() => killGroup(child, 'SIGKILL'), 15_000).unref();
  }
}

/** Signals a file's node --test process and the file's process under it. */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}

function stopServices(): Promise<void> {
  stopping ??= (async () => {
    const began = Date.now();
    const results = await Promise.allSettled([kafka?.stop(), clickhouse?.stop()]);
    for (const result of results)
      if (result.status === 'rejected') log(`stop failed: ${String(result.reason)}`);
    if (kafka || clickhouse) log(`services stopped (${seconds(Date.now() - began)})`);
  })();
  return stopping;
}

/**
 * Stops every Kafka or ClickHouse still running from a directory under var/test/: the services of
 * an interrupted earlier run, or those of a test whose after() hook never ran.
 */
async function sweepTestServices(): Promise<void> {
  const root = join(projectRoot, 'var', 'test');
  await Promise.all(
    listDirs(root).map(async (dir) => {
      for (const attach of [
        (d: string) => LocalKafkaCluster.attach(d),
        (d: string) => LocalClickHouse.attach(d),
      ]) {
        try {
          const service = attach(dir);
          if (!service) continue;
          await service.stop();
          log(`stopped leftover service in ${relative(projectRoot, dir)}`);
        } catch (error) {
          log(`could not stop the service in ${relative(projectRoot, dir)}: ${String(error)}`);
        }
      }
    }),
  );
}

function listDirs(root: string): string[] {
  try {
    return readdirSync(root, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(root, entry.name));
  } catch {
    return [];
  }
}

async function startFreshServices(): Promise<void> {
  await sweepTestServices();
  rmSync(KAFKA_DIR, { recursive: true, force: true });
  rmSync(CLICKHOUSE_DIR, { recursive: true, force: true });
  const began = Date.now();
  const [k, c] = await Promise.allSettled([
    timed(() => LocalKafkaCluster.start({ nodes: 1, dataDir: KAFKA_DIR, basePort: KAFKA_BASE_PORT })),
    timed(() =>
      LocalClickHouse.start({
        dataDir: CLICKHOUSE_DIR,
        httpPort: CLICKHOUSE_HTTP_PORT,
        tcpPort: CLICKHOUSE_TCP_PORT,
      }),
    ),
  ]);
  if (k.status === 'fulfilled') kafka = k.value.value;
  if (c.status === 'fulfilled') clickhouse = c.value.value;
  const failures = [k, c].flatMap((r) =>
    r.status === 'rejected' ? [String((r.reason as Error).message)] : [],
  );
  if (failures.length > 0) throw new Error(failures.join('\n'));
  log(
    `services ready in ${seconds(Date.now() - began)}: kafka ${kafka!.bootstrapServers} (${seconds(k.status === 'fulfilled' ? k.value.ms : 0)}), ` +
      `clickhouse ${clickhouse!.url} (${seconds(c.status === 'fulfilled' ? c.value.ms : 0)})`,
  );
}

async function timed<T>(start: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const began = Date.now();
  return { value: await start(), ms: Date.now() - began };
}

interface FileRun {
  file: string;
  lane: Lane;
  ms: number;
  code: number;
}

interface Pending {
  file: string;
  lane: Lane;
  /** The recorded duration, or a guess for a file never recorded. */
  estimateMs: number;
}

/** The duration a file never recorded is assumed to take: long enough to be started early. */
const UNKNOWN_ESTIMATE_MS = 60_000;

/**
 * Orders the files: exclusive ones first (nothing shared may run beside them, so they go while
 * the own-cluster files fill the other slots), then the pipeline files (they run one at a time, so
 * their lane is the run's longest serial path and must start at once), then the rest; longest
 * first within each, from the recorded durations, so that no long file starts last.
 */
function plan(files: readonly string[]): Pending[] {
  const recorded = readDurations(projectRoot);
  const pending = files.map((file): Pending => {
    const { lane, guessed } = laneOf(projectRoot, file);
    if (guessed && lane !== 'shared') log(`${file} is not in LANES; its text makes it ${lane}`);
    return { file, lane, estimateMs: recorded.get(file) ?? UNKNOWN_ESTIMATE_MS };
  });
  const rank = (p: Pending) => ({ exclusive: 0, pipeline: 1, own: 2, shared: 2 })[p.lane];
  return pending.sort((a, b) => rank(a) - rank(b) || b.estimateMs - a.estimateMs);
}

/**
 * Runs each file in a test runner of its own, up to `jobs` at a time within the rules of
 * scripts/integration-lanes.ts, so that the run can say how long each file took (setup, hooks and
 * process start included) and which ones failed.
 */
async function runTests(flags: string[], files: string[], long: boolean, jobs: number): Promise<FileRun[]> {
  const pending = plan(files);
  const running = new Map<string, Lane>();
  const runs: FileRun[] = [];
  let started = 0;
  await new Promise<void>((done) => {
    const next = (): void => {
      if (signalled) pending.length = 0;
      for (let i = 0; i < pending.length && running.size < jobs;) {
        const candidate = pending[i]!;
        const exclusivePending = pending.some((p) => p.lane === 'exclusive');
        const heavy = {
          file: HEAVY.has(candidate.file),
          running: [...running.keys()].filter((f) => HEAVY.has(f)).length,
        };
        if (!mayStart(candidate.lane, [...running.values()], exclusivePending, heavy)) {
          i += 1;
          continue;
        }
        pending.splice(i, 1);
        started += 1;
        running.set(candidate.file, candidate.lane);
        log(`(${started}/${files.length}) start ${candidate.file} [${candidate.lane}]`);
        const began = Date.now();
        void runTestFile(flags, candidate.file, long).then((code) => {
          const ms = Date.now() - began;
          running.delete(candidate.file);
          runs.push({ file: candidate.file, lane: candidate.lane, ms, code });
          log(`${code === 0 ? 'ok  ' : 'FAIL'} ${candidate.file} (${seconds(ms)}; ${running.size} running)`);
          next();
        });
      }
      if (running.size === 0) done();
    };
    next();
  });
  return runs;
}

/**
 * One file in a node --test process of its own. Its output is held and printed in one piece when
 * it ends (files running at once would interleave their lines), and kept in var/test/logs/.
 */
function runTestFile(flags: string[], file: string, long: boolean): Promise<number> {
  const reporter = flags.some((f) => f.startsWith('--test-reporter')) ? [] : ['--test-reporter=spec'];
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      // --test-force-exit: a file whose tests are done must not hang on a native Kafka handle whose
      // close timed out during a broker outage (the client is abandoned, its thread lives on).
      [
        '--import',
        'tsx',
        '--test',
        '--test-force-exit',
        `--test-timeout=${Math.max(600_000, (SLOW_FILES[file] ?? 0) - 60_000)}`,
        ...reporter,
        ...flags,
        file,
      ],
      {
        cwd: projectRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
        // A group of its own: node --test runs the file in a child, and a kill must reach both.
        detached: true,
        env: {
          ...process.env,
          // The pool `hamstring` gives every process: with libuv's default of 4, two librdkafka calls
          // stuck across a file's broker outages (librdkafka #5456) already reach the liveness
          // guard's half-the-pool limit, and a worker under test fails where a deployed one would not.
          UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '16',
          HAMSTRING_TEST_KAFKA_DIR: KAFKA_DIR,
          HAMSTRING_TEST_CLICKHOUSE_DIR: CLICKHOUSE_DIR,
          // A file's own ClickHouse sits at an offset from these ports (test/helpers/own-clickhouse.ts),
          // so that two runs with their own ports coexist; a file's own Kafka takes free ports
          // (test/helpers/private-kafka.ts).
          HAMSTRING_TEST_KAFKA_PORT: String(KAFKA_BASE_PORT),
          HAMSTRING_TEST_CLICKHOUSE_HTTP_PORT: String(CLICKHOUSE_HTTP_PORT),
          ...(long ? { HAMSTRING_TEST_LONG: '1' } : {}),
        },
      },
    );
    children.add(child);
    const output: Buffer[] = [];
    // A file whose process outlives this is killed and fails: one hung file (a native client whose
    // close never returns, say) must not hold the whole run, the exclusive lane least of all.
    const watchdog = setTimeout(() => {
      output.push(
        Buffer.from(
          `\n[integration] ${file}: still running after ${seconds(SLOW_FILES[file] ?? FILE_TIMEOUT_MS)}; killed\n`,
        ),
      );
      killGroup(child, 'SIGKILL');
    }, SLOW_FILES[file] ?? FILE_TIMEOUT_MS);
    child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => output.push(chunk));
    child.once('close', (code, signal) => {
      clearTimeout(watchdog);
      children.delete(child);
      const text = Buffer.concat(output);
      mkdirSync(LOG_DIR, { recursive: true });
      writeFileSync(logOf(file), text);
      process.stdout.write(`\n[integration] ---- ${file}\n`);
      process.stdout.write(text);
      resolve(code ?? SIGNAL_EXIT[signal ?? ''] ?? 1);
    });
  });
}

/** The per-file durations, longest first, the failed files, and the run's wall time. */
function summarize(runs: readonly FileRun[], wallMs: number, jobs: number): void {
  const total = runs.reduce((sum, run) => sum + run.ms, 0);
  const inLane = (lane: Lane) => runs.filter((r) => r.lane === lane).reduce((sum, r) => sum + r.ms, 0);
  log(`durations (${runs.length} files, ${seconds(total)} in all), longest first:`);
  for (const run of [...runs].sort((a, b) => b.ms - a.ms))
    log(
      `  ${seconds(run.ms).padStart(8)}  ${run.code === 0 ? 'ok  ' : 'FAIL'}  ${run.lane.padEnd(9)}  ${run.file}`,
    );
  log(
    `wall ${seconds(wallMs)} with ${jobs} at once; sum ${seconds(total)}; exclusive files (one at a time) ` +
      `${seconds(inLane('exclusive'))}; pipeline files (one at a time) ${seconds(inLane('pipeline'))}`,
  );
  const failed = runs.filter((run) => run.code !== 0);
  if (failed.length > 0) log(`${failed.length} file(s) failed: ${failed.map((r) => r.file).join(', ')}`);
  // Again at the very end, where a reader of a long run's tail finds it: each failed file's own
  // account of its failures (node's "failing tests" section), or its last lines when it has none.
  for (const run of failed) {
    const lines = readFileSync(logOf(run.file), 'utf8').split('\n');
    const from = lines.findIndex((l) => l.includes('failing tests:'));
    const shown = from >= 0 ? lines.slice(from, from + FAILURE_LINES) : lines.slice(-FAILURE_LINES);
    log(`---- why ${run.file} failed (${logOf(run.file)}):`);
    process.stdout.write(`${shown.join('\n')}\n`);
  }
}

/** How many lines of a failed file's output the summary repeats. */
const FAILURE_LINES = 80;

/** Where a file's whole output is kept. */
function logOf(file: string): string {
  return join(LOG_DIR, `${file.replace(/[/\\]/g, '__')}.log`);
}

/**
 * `--long` is the runner's; other flags pass through to node --test; globs (`*`, `**`) expand to
 * the matching files under the project.
 */
function expandArgs(args: readonly string[]): {
  long: boolean;
  record: boolean;
  jobs: number;
  flags: string[];
  files: string[];
} {
  const long = args.includes('--long');
  const record = args.includes('--record-durations');
  const jobsArg = args.find((a) => a.startsWith('--jobs='))?.slice('--jobs='.length);
  const jobs = Math.max(1, Number(jobsArg ?? process.env.HAMSTRING_IT_JOBS ?? DEFAULT_JOBS) || DEFAULT_JOBS);
  const own = (a: string) => a === '--long' || a === '--record-durations' || a.startsWith('--jobs=');
  const flags = args.filter((a) => a.startsWith('-') && !own(a));
  const patterns = args.filter((a) => !a.startsWith('-'));
  const defaults = long ? [...LONG_PROOFS, ...LONG_ONLY] : [DEFAULT_PATTERN];
  const files = (patterns.length > 0 ? patterns : defaults)
    .flatMap((pattern) => (pattern.includes('*') ? matchGlob(pattern) : [pattern]))
    .filter((file) => long || patterns.includes(file) || !LONG_ONLY.includes(file));
  return { long, record, jobs, flags, files };
}

function matchGlob(pattern: string): string[] {
  const segments = pattern.split('/');
  const firstWild = segments.findIndex((s) => s.includes('*'));
  const base = segments.slice(0, firstWild).join('/') || '.';
  const regex = new RegExp(
    `^${pattern
      .split('/')
      .map((s) =>
        s === '**' ? '(?:.*/)?' : `${s.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}/`,
      )
      .join('')
      .replace(/\/$/, '')}$`,
  );
  return listFiles(join(projectRoot, base))
    .map((file) => relative(projectRoot, file))
    .filter((file) => regex.test(file))
    .sort();
}

function listFiles(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? listFiles(join(dir, entry.name)) : [join(dir, entry.name)],
    );
  } catch {
    return [];
  }
}

async function main(): Promise<number> {
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const { long, record, jobs, flags, files } = expandArgs(process.argv.slice(2));
  if (files.length === 0) {
    log('no test files matched');
    return 1;
  }
  try {
    await startFreshServices();
    if (signalled) return SIGNAL_EXIT[signalled] ?? 1;
    const began = Date.now();
    const runs = await runTests(flags, files, long, jobs);
    summarize(runs, Date.now() - began, jobs);
    // The table is the default suite's: a long variant's duration would mislead both the reader
    // and the order of the next run.
    if (record && long) log(`--record-durations with --long: ${DURATIONS_FILE} left as it was`);
    else if (record && !signalled) {
      recordDurations(projectRoot, runs, `${new Date().toISOString().slice(0, 16)}Z, ${jobs} at once`);
      log(`durations written to ${DURATIONS_FILE}`);
    }
    const code = runs.find((run) => run.code !== 0)?.code ?? (runs.length < files.length ? 1 : 0);
    return signalled ? (SIGNAL_EXIT[signalled] ?? code) : code;
  } catch (error) {
    log(`error: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  } finally {
    await stopServices();
    await sweepTestServices();
  }
}

process.exit(await main());
