/**
 * bench:compare: the runtime's pass-through side by side with Kafka Streams (exactly_once_v2) and
 * a plain Java transactional copy loop, on one broker, measured the same way for all. See
 * bench/README.md.
 *
 *   npm run bench:compare [-- --quick] [--records N] [--sizes 200,1024] [--reps R] ...
 */
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createAdmin } from '../src/kafka/admin.ts';
import { createProducer } from '../src/kafka/producer.ts';
import { silentLogger } from '../src/observability/logger.ts';
import { createTopics } from '../test/support/pipeline-harness.ts';
import { brokerKafkaVersion, buildJavaPeers, startJava } from './compare/java.ts';
import { defaultPeers, variantPeers, type Peer } from './compare/peers.ts';
import { markdown, ratios, rows } from './compare/report.ts';
import { PARTITIONS, WINDOW, liveChildren, runOnce, type RunContext, type RunResult } from './compare/run.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

function log(msg: string): void {
  process.stderr.write(`[compare] ${msg}\n`);
}

function keyValues(list: readonly string[], option: string): Record<string, string> {
  return Object.fromEntries(
    list.map((kv) => {
      const eq = kv.indexOf('=');
      if (eq <= 0) throw new Error(`${option} wants key=value, got ${kv}`);
      return [kv.slice(0, eq), kv.slice(eq + 1)];
    }),
  );
}

interface Broker {
  bootstrap: string;
  pid: number | undefined;
  release(): Promise<void>;
}

async function obtainBroker(
  bootstrap: string | undefined,
  dataDir: string,
  port: number,
  keep: boolean,
): Promise<Broker> {
  if (bootstrap) return { bootstrap, pid: undefined, release: () => Promise.resolve() };
  const { LocalKafkaCluster } = await import('../src/dev/kafka-cluster.ts');
  const cluster = await LocalKafkaCluster.start({ nodes: 1, dataDir, basePort: port });
  const attached = cluster.wasAlreadyRunning;
  log(`${attached ? 'attached to' : 'started'} a 1-node Kafka at ${cluster.bootstrapServers} (${dataDir})`);
  return {
    bootstrap: cluster.bootstrapServers,
    pid: cluster.pidOf(1),
    release: async () => {
      if (keep || attached) return;
      await cluster.stop();
    },
  };
}

/**
 * `<id>|` then padding: exactly `size` bytes, the id is what the checker counts; keys k-0..k-63.
 * By default the Java producer writes it (Seeder.java): a client that is none of the peers, and
 * whose partitioner (murmur2) every peer shares, so each can keep a record in its partition.
 * `--seeder runtime` writes it with the runtime's producer instead, as before.
 */
async function seedWithJava(
  classPath: string,
  bootstrap: string,
  topic: string,
  count: number,
  size: number,
): Promise<void> {
  const child = startJava(classPath, 'Seeder', { bootstrap, topic, count, size });
  child.stdout!.resume();
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`seeding ${topic} with the Java producer: exit ${String(code)}`);
}

async function seedWithRuntime(bootstrap: string, topic: string, count: number, size: number): Promise<void> {
  const p = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'compare-seed',
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: 120_000,
      apiTimeoutMs: 30_000,
      overrides: { 'linger.ms': 20 },
    },
    silentLogger(),
  );
  await p.connect(30_000);
  const pad = 'x'.repeat(size);
  for (let i = 0; i < count; i += 1) {
    const head = `${i}|`;
    await p.produce({ topic, key: `k-${i % 64}`, value: Buffer.from(head + pad.slice(head.length)) });
  }
  await p.flush(120_000);
  const t = p.tally();
  await p.close(10_000);
  if (t.failed > 0) throw new Error(`seeding ${topic}: ${t.failed} records failed: ${t.firstError?.message}`);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    for (const child of liveChildren) child.kill('SIGKILL');
    process.exit(130);
  });

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      records: { type: 'string' },
      sizes: { type: 'string', default: '200,1024' },
      reps: { type: 'string' },
      peers: { type: 'string' },
      'batch-timeout-ms': { type: 'string', default: '50' },
      'commit-interval-ms': { type: 'string', default: '100' },
      bootstrap: { type: 'string', default: process.env.HAMSTRING_BENCH_BOOTSTRAP },
      port: { type: 'string', default: process.env.HAMSTRING_BENCH_KAFKA_PORT ?? '24092' },
      'data-dir': { type: 'string', default: 'var/bench-kafka' },
      'keep-broker': { type: 'boolean', default: false },
      'consumer-override': { type: 'string', multiple: true, default: [] },
      'producer-override': { type: 'string', multiple: true, default: [] },
      label: { type: 'string', default: '' },
      variant: { type: 'string', multiple: true, default: [] },
      'variant-modes': { type: 'string', default: 'eos,alo' },
      seeder: { type: 'string', default: 'java' },
    },
  });
  if (values.seeder !== 'java' && values.seeder !== 'runtime')
    throw new Error(`--seeder ${values.seeder}: java or runtime`);
  const records = Number(values.records ?? (values.quick ? 20_000 : 100_000));
  const reps = Number(values.reps ?? (values.quick ? 1 : 3));
  const sizes = values.sizes.split(',').map(Number);
  const consumerOverrides = keyValues(values['consumer-override'], '--consumer-override');
  const producerOverrides = keyValues(values['producer-override'], '--producer-override');
  const wanted = values.peers?.split(',');
  const peers: Peer[] = [
    ...defaultPeers(Number(values['commit-interval-ms'])),
    ...values.variant.flatMap((v) =>
      variantPeers(v, values['variant-modes'].split(','), Number(values['commit-interval-ms'])),
    ),
  ].filter((p) => !wanted || wanted.includes(p.id) || p.id.includes('@'));

  const kafkaVersion = brokerKafkaVersion();
  log(`building the Java peers (Kafka ${kafkaVersion}) with Maven`);
  const classPath = buildJavaPeers(kafkaVersion);
  const broker = await obtainBroker(
    values.bootstrap,
    `${ROOT}${values['data-dir']}`,
    Number(values.port),
    values['keep-broker'],
  );
  if (broker.pid === undefined) log('broker pid unknown (external --bootstrap): no broker CPU');
  const runId = Date.now().toString(36);
  const inputs = new Map(sizes.map((size) => [size, `compare-in-${size}-${runId}`]));
  const ctx: RunContext = {
    bootstrap: broker.bootstrap,
    brokerPid: broker.pid,
    classPath,
    records,
    batchTimeoutMs: Number(values['batch-timeout-ms']),
    consumerOverrides,
    producerOverrides,
    stateRoot: `${ROOT}var/bench/compare-state`,
    runId,
  };
  const results: RunResult[] = [];
  const started = new Date();
  try {
    await createTopics(broker.bootstrap, [...inputs.values()], PARTITIONS);
    for (const [size, topic] of inputs) {
      log(`seeding ${records} records of ${size} B into ${topic} (${values.seeder} producer)`);
      if (values.seeder === 'java') await seedWithJava(classPath, broker.bootstrap, topic, records, size);
      else await seedWithRuntime(broker.bootstrap, topic, records, size);
    }
    // Interleaved: every peer once per repetition, the order rotated so none always runs first.
    for (let rep = 0; rep < reps; rep += 1)
      for (const size of sizes)
        for (let k = 0; k < peers.length; k += 1) {
          const peer = peers[(k + rep) % peers.length]!;
          try {
            const r = await runOnce(ctx, peer, size, inputs.get(size)!, rep);
            results.push(r);
            log(
              `rep ${rep} ${size} B ${peer.id}: ${r.recordsPerSec.toFixed(0)}/s, ${r.peerCpuUsPerRecord.toFixed(1)} µs/rec, broker ${r.brokerCpuUsPerRecord.toFixed(1)} µs/rec, RSS ${r.peakRssMb.toFixed(0)} MB, ${r.recordsPerTxn?.toFixed(0) ?? '-'} rec/txn, check ${r.ok ? 'ok' : `FAIL ${JSON.stringify(r.check)}`}`,
            );
          } catch (e) {
            log(`rep ${rep} ${size} B ${peer.id}: FAILED ${(e as Error).message}`);
            results.push({
              peer: peer.id,
              recordBytes: size,
              rep,
              ok: false,
              error: (e as Error).message,
            } as RunResult);
          }
        }
  } finally {
    const admin = createAdmin(broker.bootstrap);
    await admin.deleteTopics([...inputs.values()]).catch(() => undefined);
    admin.close();
    await broker.release();
  }

  const table = rows(peers, sizes, results);
  const rs = ratios(table, results);
  const md = markdown(table, rs);
  const loadavg = (await import('node:os')).loadavg();
  const meta = {
    bench: 'compare',
    label: values.label,
    startedAt: started.toISOString(),
    command: process.argv.slice(2).join(' '),
    kafkaVersion,
    records,
    reps,
    sizes,
    partitions: PARTITIONS,
    seeder: values.seeder,
    window: WINDOW,
    batchTimeoutMs: ctx.batchTimeoutMs,
    consumerOverrides,
    producerOverrides,
    loadavgAtEnd: loadavg,
  };
  process.stdout.write(`${md}\n`);
  const dir = `${ROOT}var/bench`;
  mkdirSync(dir, { recursive: true });
  const stamp = started.toISOString().replace(/[:.]/g, '-');
  writeFileSync(
    `${dir}/compare-${stamp}.json`,
    `${JSON.stringify({ ...meta, rows: table, ratios: rs, results }, null, 2)}\n`,
  );
  writeFileSync(
    `${dir}/compare-${stamp}.md`,
    `# bench:compare ${started.toISOString()}${values.label ? ` (${values.label})` : ''}\n\n\`npm run bench:compare -- ${meta.command}\`\n\n${records} records, ${reps} repetitions, ${PARTITIONS} partitions, Kafka ${kafkaVersion}, input written by the ${values.seeder} producer, throughput over ${WINDOW.from * 100}→${WINDOW.to * 100} % of each output; load average at the end ${loadavg.map((x) => x.toFixed(1)).join(' ')}\n\n${md}\n`,
  );
  log(`wrote var/bench/compare-${stamp}.json and .md`);
  if (results.some((r) => !r.ok)) process.exitCode = 1;
}

await main();
