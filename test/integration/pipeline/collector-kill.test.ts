import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { decodeBatch, pipelineTopic } from '../../../src/stages/index.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { longOr } from '../../helpers/long-run.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { exited } from '../../support/spawn-worker.ts';
import { ownLineCounts, pipelineTestConfig, produceLines, readUntil, resetBroker } from './support.ts';

const LINES = longOr(6_000, 12_000);
/** Kills of the collector, each after it sent batches of a fresh chunk of the input. */
const KILLS = longOr(1, 2);
const CHUNKS = KILLS + 2;

let bootstrap: string;
const children: ChildProcess[] = [];
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
  await resetBroker(bootstrap);
});
after(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** Valid line `i`: its domain names it, so each line can be found in the batches. */
function line(i: number): string {
  const ts = new Date(Date.UTC(2026, 10, 30, 10, 0, 0) + i * 5).toISOString().replace('Z', '000Z');
  return JSON.stringify({
    ts,
    status_code: i % 7 === 0 ? 'NXDOMAIN' : 'NOERROR',
    src_ip: `10.9.${i % 12}.${(i % 200) + 1}`,
    dns_server_ip: '192.168.2.53',
    domain_name: `n${i}.example.com`,
    record_type: 'A',
    response_ip: '1.2.3.4',
    size: '100b',
  });
}

/** `hamstring run collector` as a separate process, as an operator starts it. */
function runCollector(configPath: string): ChildProcess {
  // bin/hamstring execs node in its place: kill -9 hits the collector, not a launcher above it.
  const child = spawn('bin/hamstring', ['run', 'collector', '--config', configPath, '--create-topics'], {
    env: { ...process.env, HAMSTRING_LOG_LEVEL: 'warn', HAMSTRING_INSTANCE_ID: `collector-${process.pid}` },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  children.push(child);
  return child;
}

test(`collector killed -9 mid-batch (${KILLS}x) and restarted as a separate process: the batches downstream hold every valid line exactly once`, async () => {
  const { config, path } = pipelineTestConfig({
    bootstrap,
    clickhousePort: 1,
    edit: (tree) => {
      const collection = (tree.pipeline as Record<string, Record<string, Record<string, unknown>>>)
        .log_collection!;
      collection.default_batch_handler_config!.batch_size = 300;
    },
  });
  const input = pipelineTopic(config, 'logserver_to_collector', 'dga_collector');
  const output = pipelineTopic(config, 'batch_sender_to_prefilter', 'dga_prefilter');
  const all = Array.from({ length: LINES }, (_, i) => line(i));
  const chunk = Math.ceil(LINES / CHUNKS);
  const subnetKey = (_: unknown, i: number) => `10.9.${(i % 12).toString()}.0_24`;
  const admin = createAdmin(bootstrap);
  const produced = async () =>
    (await admin.watermarks(output).catch(() => [])).reduce((n, w) => n + w.high, 0);
  let at = 0;
  const feed = async () => {
    await produceLines(bootstrap, input, all.slice(at, at + chunk), (v, i) => subnetKey(v, at + i));
    at += chunk;
  };
  try {
    let collector = runCollector(path);
    await waitFor(async () => (await admin.listTopics()).includes(input), {
      timeoutMs: 60_000,
      message: 'topics created',
    });
    for (let kill = 1; kill <= KILLS; kill += 1) {
      const before = await produced();
      await feed();
      await waitFor(async () => (await produced()) > before, {
        timeoutMs: 90_000,
        message: `the collector sends batches of chunk ${kill}`,
      });
      collector.kill('SIGKILL');
      await exited(collector);
      collector = runCollector(path);
    }
    while (at < LINES) await feed();

    const records = await readUntil(bootstrap, output, (rs) => ownLineCounts(rs).size >= LINES, 120_000);
    const fresh = ownLineCounts(records);
    const batchIds = new Map<string, number>();
    for (const r of records) {
      const { batch_id: id } = decodeBatch(r.value);
      batchIds.set(id, (batchIds.get(id) ?? 0) + 1);
    }
    const missing = all.map((_, i) => `n${i}.example.com`).filter((n) => !fresh.has(n));
    const twice = [...fresh].filter(([, n]) => n > 1).map(([name]) => name);
    assert.deepEqual(missing.slice(0, 10), [], `${missing.length} lines in no batch`);
    assert.deepEqual(twice.slice(0, 10), [], `${twice.length} lines in two batches`);
    assert.equal(fresh.size, LINES);
    assert.deepEqual(
      [...batchIds].filter(([, n]) => n > 1),
      [],
      'a batch sent twice',
    );
    collector.kill('SIGTERM');
    await exited(collector);
  } finally {
    admin.close();
  }
});
