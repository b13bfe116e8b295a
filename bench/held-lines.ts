/**
 * What the collector's held lines cost: the collector alone as the runtime runs it (exactly-once
 * worker, `batches` store with its changelog and LMDB local copy) on a private 1-node broker, fed N
 * HAMSTRING v2.0.0-format lines it holds (batch_timeout raised so none leaves; each of the 500 hosts
 * in a /24 of its own, so no batch fills), then this process's memory per held line:
 *
 *   npm run bench:held-lines -- [--lines 200000] [--port 27092]
 *
 * Printed, each as bytes per held line and as a multiple of the line's own bytes: RSS as it stands
 * once every line is consumed and committed (anonymous and file-backed: LMDB's pages are mapped),
 * and after a full GC the live V8 heap and the memory outside it (Buffers). Run through
 * bench/launch.js (the npm script does), so the process is what `hamstring run` starts: pool of 16,
 * jemalloc, 32 MB semi-spaces; `--expose-gc` for the live figures.
 */
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { getHeapSpaceStatistics } from 'node:v8';
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { buildComponentStage } from '../src/app/builtin-stages.ts';
import { runStages } from '../src/app/run-stages.ts';
import { StageResources } from '../src/app/stage-resources.ts';
import { createStageTopics } from '../src/app/stage-topics.ts';
import { bootstrapServers, validateConfig } from '../src/config/index.ts';
import { LocalKafkaCluster } from '../src/dev/kafka-cluster.ts';
import { createAdmin } from '../src/kafka/admin.ts';
import { createProducer } from '../src/kafka/producer.ts';
import { silentLogger } from '../src/observability/logger.ts';
import { pipelineTopic } from '../src/stages/index.ts';
import { subnetId } from '../src/stages/subnet.ts';
import { generateTraffic } from '../src/traffic/index.ts';
import { allocatorInUse } from './allocator.ts';
import { procRss } from './proc-rss.ts';

const { values: args } = parseArgs({
  options: {
    lines: { type: 'string', default: '200000' },
    port: { type: 'string', default: '27092' },
  },
});
const LINES = Number(args.lines);
const dir = join('var', 'bench', 'held-lines');
const log = silentLogger();
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with node --expose-gc (npm run bench:held-lines does)');

/** Bytes of the files under `path` as allocated on disk (LMDB's map file is sparse). */
function du(path: string): number {
  let total = 0;
  for (const entry of readdirSync(path, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += statSync(join(entry.parentPath, entry.name)).blocks * 512;
  }
  return total;
}

interface Memory {
  readonly rss: number;
  readonly anon: number;
  readonly file: number;
  readonly heapUsed: number;
  readonly external: number;
}

/** This process's memory now; `collect` first runs full GCs, so the heap figure is what is live. */
function memory(collect: boolean): Memory {
  if (collect) for (let i = 0; i < 3; i += 1) gc?.();
  const m = process.memoryUsage();
  const { rss, anon, file } = procRss(process.pid);
  return { rss, anon, file, heapUsed: m.heapUsed, external: m.external };
}

const traffic = generateTraffic({
  seed: 5,
  rate: 2_000,
  durationSeconds: Math.ceil(LINES / 2_000),
  hosts: 500,
  hostsPerSubnet: 1,
  startMs: Date.now() - 3_600_000,
  format: 'v2',
});
let lines: { line: string; srcIp: string }[] = [];
for (const l of traffic.lines()) {
  if (lines.length >= LINES) break;
  lines.push({ line: l.line, srcIp: l.srcIp });
}
const lineBytes = lines.reduce((sum, l) => sum + Buffer.byteLength(l.line), 0) / lines.length;

rmSync(dir, { recursive: true, force: true });
const cluster = await LocalKafkaCluster.start({
  nodes: 1,
  dataDir: join(dir, 'kafka'),
  basePort: Number(args.port),
});
const tree = parseYaml(readFileSync('config.yaml', 'utf8')) as Record<string, Record<string, unknown>>;
(tree.environment as Record<string, unknown>).kafka_bootstrap_servers = cluster.bootstrapServers;
const collection = (tree.pipeline as Record<string, Record<string, Record<string, unknown>>>).log_collection!;
// Held for the whole measurement: how long a line waits does not change what it costs meanwhile.
collection.default_batch_handler_config!.batch_timeout = 3_600;
tree.runtime = { state: { dir: join(dir, 'state') } };
const config = validateConfig(tree);
const collector = config.pipeline.log_collection.collectors[0]!;
const prefixes = config.pipeline.log_collection.default_batch_handler_config.subnet_id;
const input = pipelineTopic(config, 'logserver_to_collector', collector.name);
const output = pipelineTopic(config, 'batch_sender_to_prefilter', config.pipeline.log_filtering[0]!.name);

const resources = new StageResources();
try {
  const stage = await buildComponentStage(config, 'collector', { component: collector.name, resources });
  await createStageTopics(config, [stage], { partitions: 3 });
  const running = await runStages({
    config,
    stages: [stage],
    signals: [],
    log,
    env: { HAMSTRING_LOG_LEVEL: 'warn' },
  });
  const worker = running.workers[0]!;
  const consumed = async () =>
    (await worker.metrics.records.get()).values
      .filter((v) => v.labels.direction === 'in')
      .reduce((sum, v) => sum + v.value, 0);

  // The input, keyed by subnet as the logserver keys it, written before the idle figure is taken.
  const producer = createProducer(
    {
      bootstrapServers: bootstrapServers(config),
      clientId: 'bench-held-lines',
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: 60_000,
      apiTimeoutMs: 30_000,
    },
    log,
  );
  await producer.connect(30_000);
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  const idle = memory(true);
  const window: Promise<void>[] = [];
  for (const l of lines) {
    window.push(producer.produce({ topic: input, key: subnetId(l.srcIp, prefixes) ?? null, value: l.line }));
    if (window.length >= 10_000) await Promise.all(window.splice(0));
  }
  await Promise.all(window);
  await producer.flush(60_000);
  await producer.close(10_000);
  const sent = lines.length;
  lines = [];
  const began = Date.now();
  while ((await consumed()) < sent) {
    if (Date.now() - began > 600_000) throw new Error(`consumed ${await consumed()} of ${sent} after 10 min`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  // The last transaction commits and the local copy is written (at most 1 s after a commit).
  await new Promise((resolve) => setTimeout(resolve, 3_000));
  const held = memory(false);
  const spaces = getHeapSpaceStatistics().filter((sp) => sp.space_size > 4 * 1024 * 1024);
  const live = memory(true);
  // jemalloc gives freed pages back to the kernel only after dirty_decay_ms (30 s, bin/allocator.js).
  await new Promise((resolve) => setTimeout(resolve, 35_000));
  const settled = memory(true);
  const localCopyBytes = du(join(dir, 'state'));
  const admin = createAdmin(bootstrapServers(config), 'bench-held-lines');
  const left = (await admin.watermarks(output)).reduce((n, w) => n + w.high, 0);
  admin.close();
  await running.stop();

  const per = (bytes: number) => {
    const b = bytes / sent;
    return `${b.toFixed(0).padStart(6)} bytes a line (${(b / lineBytes).toFixed(1)} x the line)`;
  };
  console.log(`allocator: ${allocatorInUse()}; libuv pool: ${process.env.UV_THREADPOOL_SIZE ?? '4'}`);
  console.log(
    `${sent} v2.0.0 lines held, ${lineBytes.toFixed(0)} bytes a line; batches that left meanwhile: ${left}`,
  );
  console.log(`RSS once all are held          ${per(held.rss - idle.rss)}`);
  console.log(`  anonymous                    ${per(held.anon - idle.anon)}`);
  console.log(`  file-backed (LMDB's map)     ${per(held.file - idle.file)}`);
  const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`;
  console.log(
    `  V8 heap spaces then (size/used): ${spaces.map((sp) => `${sp.space_name} ${mb(sp.space_size)}/${mb(sp.space_used_size)}`).join(', ')}`,
  );
  console.log(`after a full GC: RSS           ${per(live.rss - idle.rss)}`);
  console.log(`  live V8 heap                 ${per(live.heapUsed - idle.heapUsed)}`);
  console.log(`  outside the heap (Buffers)   ${per(live.external - idle.external)}`);
  console.log(`35 s later: RSS                ${per(settled.rss - idle.rss)}`);
  console.log(`  anonymous                    ${per(settled.anon - idle.anon)}`);
  console.log(`  file-backed (LMDB's map)     ${per(settled.file - idle.file)}`);
  console.log(`the local copy's files (LMDB)  ${per(localCopyBytes)}`);
} finally {
  await resources.close();
  await cluster.stop();
}
