import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { pipelineTopic } from '../../../src/stages/index.ts';
import { freePort } from '../../helpers/free-port.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { exited } from '../../support/spawn-worker.ts';
import { ownLineCounts, pipelineTestConfig, produceLines, readUntil, resetBroker } from './support.ts';

const LINES = 4_000;
const STAGES = ['log_storage.logserver', 'log_collection.collector'];

let bootstrap: string;
const children: ChildProcess[] = [];
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
  await resetBroker(bootstrap);
});
after(() => {
  for (const child of children) child.kill('SIGKILL');
});

function line(i: number): string {
  const ts = new Date(Date.UTC(2026, 10, 30, 10, 0, 0) + i * 5).toISOString().replace('Z', '000Z');
  return JSON.stringify({
    ts,
    status_code: 'NOERROR',
    src_ip: `10.7.${i % 10}.${(i % 200) + 1}`,
    dns_server_ip: '192.168.2.53',
    domain_name: `g${i}.example.com`,
    record_type: 'A',
    response_ip: '1.2.3.4',
    size: '100b',
  });
}

/** The logserver and the collector in one `hamstring run` process. */
function runGrouped(configPath: string, healthPort: number): ChildProcess {
  const child = spawn(
    'bin/hamstring',
    ['run', 'logserver', 'collector:dga_collector', '--config', configPath, '--create-topics'],
    {
      env: {
        ...process.env,
        HAMSTRING_LOG_LEVEL: 'warn',
        HAMSTRING_INSTANCE_ID: `grouped-${process.pid}`,
        HAMSTRING_HEALTH_PORT: String(healthPort),
      },
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  children.push(child);
  return child;
}

async function metrics(port: number): Promise<string> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    return res.ok ? await res.text() : '';
  } catch {
    return '';
  }
}

/** Records the named stage consumed, from its worker's series. */
function consumed(text: string, stage: string): number {
  let n = 0;
  for (const m of text.matchAll(/^hamstring_worker_records_total\{([^}]*)\} (\S+)$/gm))
    if (m[1]!.includes(`stage="${stage}"`) && m[1]!.includes('direction="in"')) n += Number(m[2]);
  return n;
}

test('two stages in one `hamstring run` process: both work from it, and after kill -9 and a restart every line is in exactly one batch', async () => {
  const { config, path } = pipelineTestConfig({
    bootstrap,
    clickhousePort: 1,
    edit: (tree) => {
      const collection = (tree.pipeline as Record<string, Record<string, Record<string, unknown>>>)
        .log_collection!;
      collection.default_batch_handler_config!.batch_size = 200;
    },
  });
  const input = pipelineTopic(config, 'logserver_in', 'dns');
  const output = pipelineTopic(config, 'batch_sender_to_prefilter', 'dga_prefilter');
  const all = Array.from({ length: LINES }, (_, i) => line(i));
  const admin = createAdmin(bootstrap);
  const port = await freePort();
  try {
    let grouped = runGrouped(path, port);
    await waitFor(async () => (await admin.listTopics()).includes(output), {
      timeoutMs: 60_000,
      message: 'topics created',
    });
    await produceLines(bootstrap, input, all.slice(0, LINES / 2));
    // One process serves both workers: each has consumed records by its own series.
    await waitFor(() => bothWorking(port), {
      timeoutMs: 90_000,
      message: 'the logserver and the collector consume in the one process',
    });
    grouped.kill('SIGKILL');
    await exited(grouped);
    await produceLines(bootstrap, input, all.slice(LINES / 2));
    grouped = runGrouped(path, port);

    const records = await readUntil(bootstrap, output, (rs) => ownLineCounts(rs).size >= LINES, 120_000);
    const fresh = ownLineCounts(records);
    const missing = all.map((_, i) => `g${i}.example.com`).filter((n) => !fresh.has(n));
    const twice = [...fresh].filter(([, n]) => n > 1).map(([name]) => name);
    assert.deepEqual(missing.slice(0, 10), [], `${missing.length} lines in no batch`);
    assert.deepEqual(twice.slice(0, 10), [], `${twice.length} lines in two batches`);
    assert.equal(fresh.size, LINES);
    const text = await metrics(port);
    for (const stage of STAGES)
      assert.ok(consumed(text, stage) > 0, `the restarted process serves ${stage}'s series and it consumed`);
    grouped.kill('SIGTERM');
    await exited(grouped);
    assert.equal(grouped.exitCode, 0, 'SIGTERM stops both workers and the process exits 0');
  } finally {
    admin.close();
  }
});

async function bothWorking(port: number): Promise<boolean> {
  const text = await metrics(port);
  return STAGES.every((stage) => consumed(text, stage) > 0);
}
