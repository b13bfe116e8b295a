/**
 * Runs the integration tests against fresh run-wide services:
 *
 *   node --import tsx scripts/run-integration-tests.ts [--long] [node --test flags] [files or globs]
 *
 * `--long` (npm run test:long) runs the long variants of the proofs that have one: it sets
 * HAMSTRING_TEST_LONG=1 (test/helpers/long-run.ts) and, without files, runs the files of LONG_PROOFS.
 *
 * Starts a 1-node Kafka (base port 19092, var/test/kafka) and ClickHouse (HTTP 18123, TCP 19000,
 * var/test/clickhouse) in parallel, wiped first; exports HAMSTRING_TEST_KAFKA_DIR and
 * HAMSTRING_TEST_CLICKHOUSE_DIR for the fixtures in test/helpers; runs the files one at a time and
 * ends with each file's duration, longest first; always stops both services (also on
 * SIGINT/SIGTERM) and exits with the tests' exit code.
 * Globs are expanded here because Node 20's test runner does not expand them.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join, relative } from 'node:path';
import { LocalClickHouse } from '../src/dev/clickhouse-server.ts';
import { LocalKafkaCluster } from '../src/dev/kafka-cluster.ts';
import { projectRoot } from '../src/dev/paths.ts';

const KAFKA_DIR = join(projectRoot, 'var', 'test', 'kafka');
const CLICKHOUSE_DIR = join(projectRoot, 'var', 'test', 'clickhouse');
// Overridable so that two runs on one machine (e.g. a developer's and a clean-clone CI check) coexist.
const KAFKA_BASE_PORT = Number(process.env.HAMSTRING_IT_KAFKA_PORT ?? 19092);
const CLICKHOUSE_HTTP_PORT = Number(process.env.HAMSTRING_IT_CLICKHOUSE_HTTP_PORT ?? 18123);
const CLICKHOUSE_TCP_PORT = Number(process.env.HAMSTRING_IT_CLICKHOUSE_TCP_PORT ?? 19000);
const DEFAULT_PATTERN = 'test/integration/**/*.test.ts';
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
];
const SIGNAL_EXIT: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

const log = (line: string): void => void process.stderr.write(`[integration] ${line}\n`);
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

let kafka: LocalKafkaCluster | undefined;
let clickhouse: LocalClickHouse | undefined;
let tests: ChildProcess | undefined;
let signalled: NodeJS.Signals | undefined;
let stopping: Promise<void> | undefined;

function onSignal(signal: NodeJS.Signals): void {
  if (signalled) return;
  signalled = signal;
  log(`${signal}: stopping the tests, then the services`);
  if (tests && tests.exitCode === null) {
    tests.kill(signal);
    setTimeout(() => tests?.kill('SIGKILL'), 15_000).unref();
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
  ms: number;
  code: number;
}

/**
 * Runs each file in a test runner of its own, one at a time, so that the run can say how long each
 * file took (setup, hooks and process start included) and which ones failed.
 */
async function runTests(flags: string[], files: string[], long: boolean): Promise<FileRun[]> {
  const runs: FileRun[] = [];
  for (const [index, file] of files.entries()) {
    if (signalled) break;
    log(`(${index + 1}/${files.length}) ${file}`);
    const began = Date.now();
    const code = await runTestFile(flags, file, long);
    runs.push({ file, ms: Date.now() - began, code });
  }
  return runs;
}

function runTestFile(flags: string[], file: string, long: boolean): Promise<number> {
  return new Promise((resolve) => {
    tests = spawn(
      process.execPath,
      // --test-force-exit: a file whose tests are done must not hang on a native Kafka handle whose
      // close timed out during a broker outage (the client is abandoned, its thread lives on).
      ['--import', 'tsx', '--test', '--test-force-exit', '--test-timeout=600000', ...flags, file],
      {
        cwd: projectRoot,
        stdio: 'inherit',
        env: {
          ...process.env,
          // The pool `hamstring` gives every process: with libuv's default of 4, two librdkafka calls
          // stuck across a file's broker outages (librdkafka #5456) already reach the liveness
          // guard's half-the-pool limit, and a worker under test fails where a deployed one would not.
          UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '16',
          HAMSTRING_TEST_KAFKA_DIR: KAFKA_DIR,
          HAMSTRING_TEST_CLICKHOUSE_DIR: CLICKHOUSE_DIR,
          ...(long ? { HAMSTRING_TEST_LONG: '1' } : {}),
        },
      },
    );
    tests.once('exit', (code, signal) => resolve(code ?? SIGNAL_EXIT[signal ?? ''] ?? 1));
  });
}

/** The per-file durations, longest first, and the files that failed. */
function summarize(runs: readonly FileRun[]): void {
  const total = runs.reduce((sum, run) => sum + run.ms, 0);
  log(`durations (${runs.length} files, ${seconds(total)} in all), longest first:`);
  for (const run of [...runs].sort((a, b) => b.ms - a.ms))
    log(`  ${seconds(run.ms).padStart(8)}  ${run.code === 0 ? 'ok  ' : 'FAIL'}  ${run.file}`);
  const failed = runs.filter((run) => run.code !== 0);
  if (failed.length > 0) log(`${failed.length} file(s) failed: ${failed.map((r) => r.file).join(', ')}`);
}

/**
 * `--long` is the runner's; other flags pass through to node --test; globs (`*`, `**`) expand to
 * the matching files under the project.
 */
function expandArgs(args: readonly string[]): { long: boolean; flags: string[]; files: string[] } {
  const long = args.includes('--long');
  const flags = args.filter((a) => a.startsWith('-') && a !== '--long');
  const patterns = args.filter((a) => !a.startsWith('-'));
  const defaults = long ? LONG_PROOFS : [DEFAULT_PATTERN];
  const files = (patterns.length > 0 ? patterns : defaults).flatMap((pattern) =>
    pattern.includes('*') ? matchGlob(pattern) : [pattern],
  );
  return { long, flags, files };
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
  const { long, flags, files } = expandArgs(process.argv.slice(2));
  if (files.length === 0) {
    log('no test files matched');
    return 1;
  }
  try {
    await startFreshServices();
    if (signalled) return SIGNAL_EXIT[signalled] ?? 1;
    const runs = await runTests(flags, files, long);
    summarize(runs);
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
