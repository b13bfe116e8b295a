/**
 * Runtime benchmark: one pass-through TransactionalWorker against a real 1-node broker, over a
 * matrix of record size x batch size x mode. See bench/README.md for what each number means.
 *
 *   node --import tsx bench/runtime.ts [--quick] [--records N] [--port P] [--keep-broker] [--commit-interval-ms MS]
 *
 * The worker runs in a child process (this file with --worker), so the RSS reported is the worker's
 * alone and the bench's own producer and reader do not compete with it on the event loop.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createAdmin } from '../src/kafka/admin.ts';
import { createConsumer, type ConsumerPort } from '../src/kafka/consumer.ts';
import { createReadCommittedReader, type RecordReader } from '../src/kafka/read-committed-reader.ts';
import { createProducer, type ProducerPort } from '../src/kafka/producer.ts';
import type { TopicPartitionOffset } from '../src/kafka/records.ts';
import { createLogger, silentLogger } from '../src/observability/logger.ts';
// The worker module, not the runtime's whole public surface (config loading, health server, thread
// pool): the RSS column measures the worker.
import { TransactionalWorker } from '../src/runtime/worker/transactional-worker.ts';
import type { KafkaClientFactory } from '../src/runtime/worker-options.ts';
import { createTopics, passThroughStage, testKafkaOptions } from '../test/support/pipeline-harness.ts';
import { obtainBroker, type Broker } from './bench-broker.ts';
import { PLAINTEXT_SECURITY, kafkaSecurityFromEnv } from '../src/config/index.ts';
import { useKafkaSecurity } from '../src/kafka/security.ts';

type Mode = 'exactly-once' | 'at-least-once';

const PARTITIONS = 6;
const RECORD_SIZES = [200, 1024];
const BATCH_SIZES = [50, 500];
const MODES: Mode[] = ['exactly-once', 'at-least-once'];
const BATCH_TIMEOUT_MS = 50; // the shipped config.yaml's kafka_transaction_batch.timeout_ms
const ROOT = new URL('../', import.meta.url);

interface ChildConfig {
  bootstrap: string;
  input: string;
  output: string;
  group: string;
  mode: Mode;
  batchSize: number;
  /** Input records already in the topic: the worker is caught up once it committed them all. */
  target: number;
  producerOverrides: Record<string, string>;
  /** Exactly-once: one transaction spans the batches of this long (config.yaml's commit_interval_ms). */
  commitIntervalMs?: number;
}

type ChildMessage =
  | { type: 'caught-up'; startupMs: number; elapsedMs: number; commitMs: number[]; cpuMs: number }
  | { type: 'final'; maxRssBytes: number; commits: number };

// ---------------------------------------------------------------------------------------------
// Child: the worker under test.
// ---------------------------------------------------------------------------------------------

/**
 * Wraps the worker's Kafka ports to time commits and to know, without polling the broker, when the
 * committed input offsets reach the target. Exactly-once: the commitTransaction call (it flushes the
 * transaction's records). At-least-once: flush start to commitOffsets end, the same work.
 */
class CommitProbe {
  readonly commitMs: number[] = [];
  firstFetchAt: number | undefined;
  doneAt: number | undefined;
  /** The process's CPU (every thread: librdkafka's too) at the first fetch and at done, in µs. */
  cpuAtFirstFetch: number | undefined;
  cpuAtDone: number | undefined;
  readonly #committed = new Map<string, number>();
  #pending: TopicPartitionOffset[] | undefined;
  #flushStart: number | undefined;

  constructor(
    private readonly target: number,
    private readonly onDone: () => void,
  ) {}

  readonly clients: KafkaClientFactory = {
    consumer: (settings, listener, onError, log) => {
      const c = createConsumer(settings, listener, onError, log);
      return {
        ...c,
        consume: async (max, timeoutMs) => {
          const records = await c.consume(max, timeoutMs);
          if (records.length > 0 && this.firstFetchAt === undefined) {
            this.firstFetchAt = performance.now();
            this.cpuAtFirstFetch = cpuMicros();
          }
          return records;
        },
        commitOffsets: async (offsets) => {
          const t0 = this.#flushStart ?? performance.now();
          this.#flushStart = undefined;
          await c.commitOffsets(offsets);
          this.#commit(performance.now() - t0, offsets);
        },
      } satisfies ConsumerPort;
    },
    producer: (settings, log) => {
      const p = createProducer(settings, log);
      return {
        ...p,
        flush: async (timeoutMs) => {
          this.#flushStart = performance.now();
          await p.flush(timeoutMs);
        },
        sendOffsets: async (offsets, consumer) => {
          await p.sendOffsets(offsets, consumer);
          this.#pending = offsets;
        },
        abortTransaction: async () => {
          this.#pending = undefined;
          await p.abortTransaction();
        },
        commitTransaction: async () => {
          const t0 = performance.now();
          await p.commitTransaction();
          const offsets = this.#pending ?? [];
          this.#pending = undefined;
          this.#commit(performance.now() - t0, offsets);
        },
      } satisfies ProducerPort;
    },
  };

  #commit(ms: number, offsets: TopicPartitionOffset[]): void {
    if (this.doneAt !== undefined) return;
    this.commitMs.push(ms);
    for (const o of offsets) this.#committed.set(`${o.topic}:${o.partition}`, o.offset);
    let total = 0;
    for (const offset of this.#committed.values()) total += offset;
    if (total >= this.target) {
      this.doneAt = performance.now();
      this.cpuAtDone = cpuMicros();
      this.onDone();
    }
  }
}

function cpuMicros(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

async function runChild(cfg: ChildConfig): Promise<void> {
  const send = (m: ChildMessage) => process.send?.(m);
  let maxRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (maxRss = Math.max(maxRss, process.memoryUsage().rss)), 100);
  const started = performance.now();
  const probe = new CommitProbe(cfg.target, () =>
    send({
      type: 'caught-up',
      startupMs: (probe.firstFetchAt ?? started) - started,
      elapsedMs: probe.doneAt! - (probe.firstFetchAt ?? started),
      commitMs: probe.commitMs,
      cpuMs: ((probe.cpuAtDone ?? 0) - (probe.cpuAtFirstFetch ?? 0)) / 1_000,
    }),
  );
  const worker = new TransactionalWorker({
    stage: passThroughStage(cfg.input, cfg.output, cfg.group),
    instanceId: 'bench',
    mode: cfg.mode,
    // config.yaml's values where they differ from the test defaults.
    kafka: testKafkaOptions(cfg.bootstrap, {
      maxPollIntervalMs: 300_000,
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: 60_000,
      apiTimeoutMs: 30_000,
      producerOverrides: cfg.producerOverrides,
    }),
    batch: { size: cfg.batchSize, timeoutMs: BATCH_TIMEOUT_MS },
    ...(cfg.commitIntervalMs === undefined ? {} : { commitInterval: { maxMs: cfg.commitIntervalMs } }),
    // The transaction path alone, as bench/README.md's history measured it: no delivery-attempt store.
    attemptStore: false,
    log: createLogger({ bench: cfg.group }, 2),
    clients: probe.clients,
  });
  process.on('message', (m: { type: string }) => {
    if (m.type !== 'stop') return;
    void worker.stop().then(() => {
      clearInterval(sampler);
      maxRss = Math.max(maxRss, process.memoryUsage().rss);
      send({ type: 'final', maxRssBytes: maxRss, commits: worker.status().committedTransactions });
      process.disconnect();
      setTimeout(() => process.exit(0), 5_000).unref();
    });
  });
  await worker.start();
}

// ---------------------------------------------------------------------------------------------
// Parent: broker, data, scenarios, report.
// ---------------------------------------------------------------------------------------------

/**
 * `<id>|<sent>|xxx...`, exactly `size` bytes. The id makes loss and duplicates visible at the reader;
 * `sent` (latency phase only) is the produce time: it must travel in the value, the pass-through
 * stage copies key and value but not headers.
 */
function valueOf(id: string, size: number, sent = ''): Buffer {
  const head = `${id}|${sent}|`;
  return Buffer.from(head + 'x'.repeat(Math.max(0, size - head.length)));
}

function benchProducer(bootstrap: string, lingerMs: number): ProducerPort {
  return createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'bench-producer',
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: 120_000,
      apiTimeoutMs: 30_000,
      overrides: { 'linger.ms': lingerMs },
    },
    silentLogger(),
  );
}

async function seedInput(bootstrap: string, topic: string, count: number, size: number): Promise<void> {
  const p = benchProducer(bootstrap, 20);
  await p.connect(30_000);
  for (let i = 0; i < count; i += 1)
    await p.produce({ topic, key: `k-${i % 64}`, value: valueOf(String(i), size) });
  await p.flush(120_000);
  const t = p.tally();
  await p.close(10_000);
  if (t.failed > 0)
    throw new Error(`seeding ${topic} failed for ${t.failed} records: ${t.firstError?.message}`);
}

/** A read_committed reader of the output: counts distinct ids and duplicates, and measures latency. */
class OutputReader {
  readonly seen = new Set<string>();
  duplicates = 0;
  readonly latencyMs: number[] = [];
  readonly #consumer: RecordReader;

  constructor(
    bootstrap: string,
    private readonly topic: string,
    private readonly latencyPrefix: string,
  ) {
    this.#consumer = createReadCommittedReader({
      bootstrap,
      clientId: 'bench-reader',
      groupId: `bench-reader-${topic}`,
    });
  }

  #started = false;

  async start(): Promise<void> {
    this.#started = true;
    await this.#consumer.connect(30_000);
    this.#consumer.subscribe([this.topic]);
  }

  /**
   * Reads until `done()` or the deadline; true when done. Measuring latency, read one record per
   * call: consume(n) returns only once n records came or none came for its timeout, so a larger n
   * would add the reader's own batching to every record's latency.
   */
  async pump(done: () => boolean, timeoutMs: number, max = 1_000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) return false;
      for (const r of await this.#consumer.consume(max, 50)) {
        const [id = '', sent = ''] = (r.value?.toString('latin1', 0, 64) ?? '').split('|', 2);
        if (this.seen.has(id)) this.duplicates += 1;
        else this.seen.add(id);
        if (sent !== '' && id.startsWith(this.latencyPrefix))
          this.latencyMs.push(performance.timeOrigin + performance.now() - Number(sent));
      }
    }
    return true;
  }

  /** A client that never connected must not be disconnected: the binding crashes the process. */
  close(): Promise<void> {
    return this.#started ? this.#consumer.close(10_000) : Promise.resolve();
  }
}

/** Produces `count` records at `ratePerSec`, each stamped with its send time. */
async function produceAtRate(
  p: ProducerPort,
  topic: string,
  prefix: string,
  size: number,
  count: number,
  ratePerSec: number,
): Promise<void> {
  const start = performance.now();
  for (let j = 0; j < count; j += 1) {
    const due = start + (j * 1_000) / ratePerSec;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    await p.produce({
      topic,
      key: `k-${j % 64}`,
      value: valueOf(`${prefix}${j}`, size, (performance.timeOrigin + performance.now()).toFixed(3)),
    });
  }
}

function spawnWorker(cfg: ChildConfig): ChildProcess {
  return fork(fileURLToPath(import.meta.url), ['--worker'], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    env: {
      ...process.env,
      HAMSTRING_BENCH_CHILD: JSON.stringify(cfg),
      HAMSTRING_LOG_LEVEL: process.env.HAMSTRING_LOG_LEVEL ?? 'warn',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

function nextMessage<T extends ChildMessage['type']>(
  child: ChildProcess,
  type: T,
  timeoutMs: number,
): Promise<Extract<ChildMessage, { type: T }>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => finish(new Error(`worker sent no ${type} within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onMessage = (m: ChildMessage) => {
      if (m.type === type) finish(undefined, m as Extract<ChildMessage, { type: T }>);
    };
    const onExit = (code: number | null) => finish(new Error(`worker exited (${code}) before ${type}`));
    function finish(err: Error | undefined, m?: Extract<ChildMessage, { type: T }>) {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(m!);
    }
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

type Security = 'plaintext' | 'sasl_ssl';

interface Scenario {
  id: string;
  /** How the worker and the bench's clients connect (same broker, another listener). */
  security: Security;
  mode: Mode;
  recordBytes: number;
  batchSize: number;
}

interface Result extends Scenario {
  records: number;
  seconds: number;
  recordsPerSec: number;
  mbPerSec: number;
  /** The worker process's CPU (all threads) per input record over the throughput phase. */
  cpuUsPerRecord: number;
  startupMs: number;
  e2eP50Ms: number;
  e2eP99Ms: number;
  commitP50Ms: number;
  commitP99Ms: number;
  commits: number;
  maxRssMb: number;
  duplicates: number;
  missing: number;
  ok: boolean;
}

interface Plan {
  bootstrap: string;
  records: number;
  latencyRate: number;
  latencyRecords: number;
  producerOverrides: Record<string, string>;
  commitIntervalMs?: number;
}

/** Records in each input topic so far (seed + every latency phase): what a new group must read. */
const inputTotals = new Map<string, number>();

async function runScenario(plan: Plan, s: Scenario, input: string, runId: string): Promise<Result> {
  const output = `bench-out-${s.id}-${runId}`;
  await createTopics(plan.bootstrap, [output], PARTITIONS);
  const before = inputTotals.get(input)!;
  const prefix = `L${s.id}-`;
  const reader = new OutputReader(plan.bootstrap, output, prefix);
  const child = spawnWorker({
    bootstrap: plan.bootstrap,
    input,
    output,
    group: `bench-${s.id}-${runId}`,
    mode: s.mode,
    batchSize: s.batchSize,
    target: before,
    producerOverrides: plan.producerOverrides,
    ...(plan.commitIntervalMs === undefined ? {} : { commitIntervalMs: plan.commitIntervalMs }),
  });
  try {
    const caughtUp = await nextMessage(child, 'caught-up', Math.max(180_000, before * 5));
    // Drain the output before the latency phase, so the reader's backlog does not skew latency.
    await reader.start();
    if (!(await reader.pump(() => reader.seen.size >= before, 120_000)))
      log(`  reader saw only ${reader.seen.size} of ${before} records`);
    const p = benchProducer(plan.bootstrap, 0);
    await p.connect(30_000);
    inputTotals.set(input, before + plan.latencyRecords);
    const [, complete] = await Promise.all([
      produceAtRate(p, input, prefix, s.recordBytes, plan.latencyRecords, plan.latencyRate),
      reader.pump(() => reader.latencyMs.length >= plan.latencyRecords, 60_000 + plan.latencyRecords, 1),
    ]);
    if (!complete) log(`  only ${reader.latencyMs.length} of ${plan.latencyRecords} latency records arrived`);
    await p.close(10_000);
    // A little longer, so duplicates beyond the expected count show up.
    await reader.pump(() => false, 1_000);
    child.send({ type: 'stop' });
    const final = await nextMessage(child, 'final', 60_000);
    const expected = before + plan.latencyRecords;
    const missing = expected - reader.seen.size;
    const seconds = caughtUp.elapsedMs / 1_000;
    return {
      ...s,
      records: before,
      seconds,
      recordsPerSec: before / seconds,
      mbPerSec: (before * s.recordBytes) / seconds / 1e6,
      cpuUsPerRecord: (caughtUp.cpuMs * 1_000) / before,
      startupMs: caughtUp.startupMs,
      e2eP50Ms: percentile(reader.latencyMs, 50),
      e2eP99Ms: percentile(reader.latencyMs, 99),
      commitP50Ms: percentile(caughtUp.commitMs, 50),
      commitP99Ms: percentile(caughtUp.commitMs, 99),
      commits: final.commits,
      maxRssMb: final.maxRssBytes / 2 ** 20,
      duplicates: reader.duplicates,
      missing,
      ok: missing === 0 && (s.mode === 'at-least-once' || reader.duplicates === 0),
    };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await reader.close();
    const admin = createAdmin(plan.bootstrap);
    await admin.deleteTopics([output]).catch(() => undefined);
    admin.close();
  }
}

function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function table(results: Result[]): string {
  const f = (n: number, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '-');
  const rows = results.map((r) =>
    [
      r.security,
      r.mode,
      `${r.recordBytes} B`,
      r.batchSize,
      r.records,
      f(r.recordsPerSec),
      f(r.mbPerSec, 1),
      f(r.cpuUsPerRecord, 1),
      f(r.e2eP50Ms, 1),
      f(r.e2eP99Ms, 1),
      f(r.commitP50Ms, 1),
      f(r.commitP99Ms, 1),
      f(r.maxRssMb),
      r.ok ? 'ok' : `FAIL (${r.missing} missing, ${r.duplicates} dup)`,
    ].join(' | '),
  );
  return [
    '| security | mode | record | batch | records | records/s | MB/s | CPU µs/record | e2e p50 ms | e2e p99 ms | commit p50 ms | commit p99 ms | max RSS MB | output check |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r} |`),
  ].join('\n');
}

/**
 * Makes `security` the settings of this process's clients and of the workers it forks (they read
 * the KAFKA_* variables); returns the listener to use.
 */
function useSecurity(broker: Broker, security: Security): string {
  for (const v of [
    'KAFKA_SECURITY_PROTOCOL',
    'KAFKA_SASL_USERNAME',
    'KAFKA_SASL_PASSWORD',
    'KAFKA_SSL_CA_FILE',
  ])
    delete process.env[v];
  if (security === 'plaintext' || broker.saslSsl === undefined) {
    useKafkaSecurity(PLAINTEXT_SECURITY);
    return broker.bootstrap;
  }
  const s = broker.saslSsl;
  Object.assign(process.env, {
    KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
    KAFKA_SASL_USERNAME: s.username,
    KAFKA_SASL_PASSWORD: s.password,
    KAFKA_SSL_CA_FILE: s.caFile,
  });
  useKafkaSecurity(kafkaSecurityFromEnv(process.env));
  return s.bootstrap;
}

function log(msg: string): void {
  process.stderr.write(`[bench] ${msg}\n`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      records: { type: 'string' },
      'keep-broker': { type: 'boolean', default: false },
      port: { type: 'string', default: process.env.HAMSTRING_BENCH_KAFKA_PORT ?? '25092' },
      'producer-override': { type: 'string', multiple: true, default: [] },
      worker: { type: 'boolean', default: false },
      // plaintext, sasl_ssl or both (comma-separated): the TLS cost in one run, same broker and data.
      security: { type: 'string', default: 'plaintext' },
      // exactly-once, at-least-once or both: `--mode exactly-once` halves a TLS-cost run.
      mode: { type: 'string', default: MODES.join(',') },
      // Exactly-once transactions spanning the batches of this many ms (absent: one per batch).
      'commit-interval-ms': { type: 'string' },
    },
  });
  const modes = values.mode.split(',').map((m) => m.trim());
  for (const m of modes)
    if (!(MODES as string[]).includes(m)) throw new Error(`--mode wants ${MODES.join(' and/or ')}, got ${m}`);
  const securities = values.security.split(',').map((s) => s.trim());
  for (const s of securities)
    if (s !== 'plaintext' && s !== 'sasl_ssl')
      throw new Error(`--security wants plaintext and/or sasl_ssl, got ${s}`);
  if (values.worker) return runChild(JSON.parse(process.env.HAMSTRING_BENCH_CHILD!) as ChildConfig);

  const records = Number(values.records ?? (values.quick ? 20_000 : 200_000));
  const latencySeconds = values.quick ? 4 : 15;
  const latencyRate = values.quick ? 500 : 1_000;
  const producerOverrides = Object.fromEntries(
    values['producer-override'].map((kv) => {
      const eq = kv.indexOf('=');
      if (eq <= 0) throw new Error(`--producer-override wants key=value, got ${kv}`);
      return [kv.slice(0, eq), kv.slice(eq + 1)];
    }),
  );
  const broker = await obtainBroker(
    Number(values.port),
    values['keep-broker'],
    log,
    securities.includes('sasl_ssl'),
  );
  const plan: Plan = {
    bootstrap: broker.bootstrap,
    records,
    latencyRate,
    latencyRecords: latencySeconds * latencyRate,
    producerOverrides,
    ...(values['commit-interval-ms'] === undefined
      ? {}
      : { commitIntervalMs: Number(values['commit-interval-ms']) }),
  };
  const runId = Date.now().toString(36);
  const inputs = new Map(RECORD_SIZES.map((size) => [size, `bench-in-${size}-${runId}`]));
  const results: Result[] = [];
  const t0 = Date.now();
  try {
    await createTopics(plan.bootstrap, [...inputs.values()], PARTITIONS);
    for (const [size, topic] of inputs) {
      log(`seeding ${records} records of ${size} B into ${topic}`);
      await seedInput(plan.bootstrap, topic, records, size);
      inputTotals.set(topic, records);
    }
    // Each scenario runs over every listener back to back, so a change in the machine's load between
    // scenarios does not land on one listener's figures only.
    for (const recordBytes of RECORD_SIZES)
      for (const batchSize of BATCH_SIZES)
        for (const mode of modes as Mode[])
          for (const security of securities as Security[]) {
            plan.bootstrap = useSecurity(broker, security);
            const s: Scenario = {
              id: `${security === 'sasl_ssl' ? 'tls-' : ''}${mode === 'exactly-once' ? 'eos' : 'alo'}-${recordBytes}-${batchSize}`,
              security,
              mode,
              recordBytes,
              batchSize,
            };
            log(`scenario ${s.id}`);
            const r = await runScenario(plan, s, inputs.get(recordBytes)!, runId);
            log(
              `  ${r.recordsPerSec.toFixed(0)} records/s, ${r.cpuUsPerRecord.toFixed(1)} µs CPU a record, commit p50 ${r.commitP50Ms.toFixed(1)} ms, e2e p50 ${r.e2eP50Ms.toFixed(1)} p99 ${r.e2eP99Ms.toFixed(1)} ms, RSS ${r.maxRssMb.toFixed(0)} MB`,
            );
            results.push(r);
          }
  } finally {
    plan.bootstrap = useSecurity(broker, 'plaintext');
    const admin = createAdmin(plan.bootstrap);
    await admin.deleteTopics([...inputs.values()]).catch(() => undefined);
    admin.close();
    await broker.release();
  }

  const at500 = (mode: Mode, size: number) =>
    results.find(
      (r) => r.security === securities[0] && r.mode === mode && r.recordBytes === size && r.batchSize === 500,
    )?.recordsPerSec;
  const tlsCost = results
    .filter((r) => r.security === 'sasl_ssl')
    .flatMap((r) => {
      const plain = results.find((p) => p.security === 'plaintext' && p.id === r.id.replace(/^tls-/, ''));
      return plain === undefined
        ? []
        : [
            {
              scenario: plain.id,
              plaintextPerSec: plain.recordsPerSec,
              saslSslPerSec: r.recordsPerSec,
              ratio: r.recordsPerSec / plain.recordsPerSec,
            },
          ];
    });
  const ratios: Record<string, number> = {};
  for (const size of RECORD_SIZES) {
    const eos = at500('exactly-once', size);
    const alo = at500('at-least-once', size);
    if (eos !== undefined && alo !== undefined) ratios[`${size}B`] = eos / alo;
  }
  const maxRssMb = Math.max(...results.map((r) => r.maxRssMb));
  const minRatio = Math.min(...Object.values(ratios));
  process.stdout.write(`${table(results)}\n\n`);
  if (Object.keys(ratios).length > 0)
    process.stdout.write(
      `exactly-once / at-least-once throughput at batch 500: ${Object.entries(ratios)
        .map(([k, v]) => `${k} ${v.toFixed(2)}`)
        .join(', ')} (target >= 0.8: ${minRatio >= 0.8 ? 'met' : 'NOT met'})\n`,
    );
  process.stdout.write(
    `max worker RSS: ${maxRssMb.toFixed(0)} MB (target < 200 MB: ${maxRssMb < 200 ? 'met' : 'NOT met'})\n`,
  );
  if (tlsCost.length > 0) {
    process.stdout.write(
      'the cost of TLS (SASL_SSL with SCRAM-SHA-512 against PLAINTEXT, same broker and input):\n',
    );
    for (const c of tlsCost)
      process.stdout.write(
        `  ${c.scenario}: PLAINTEXT ${c.plaintextPerSec.toFixed(0)} records/s, SASL_SSL ${c.saslSslPerSec.toFixed(0)} records/s, ratio ${c.ratio.toFixed(2)}\n`,
      );
  }
  process.stdout.write(`wall time: ${((Date.now() - t0) / 1000).toFixed(0)} s\n\n`);
  process.stdout.write(
    `${JSON.stringify({
      bench: 'runtime',
      quick: values.quick,
      producerOverrides,
      records,
      partitions: PARTITIONS,
      latency: { ratePerSec: latencyRate, records: plan.latencyRecords },
      results,
      eosAloRatioBatch500: ratios,
      tlsCost,
      maxRssMb,
      targets: { ratioMet: Object.keys(ratios).length > 0 ? minRatio >= 0.8 : null, rssMet: maxRssMb < 200 },
    })}\n`,
  );
  if (results.some((r) => !r.ok)) process.exitCode = 1;
}

await main();
