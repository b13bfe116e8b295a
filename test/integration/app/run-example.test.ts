import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { createProducer } from '../../../src/kafka/producer.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { freePort } from '../../helpers/free-port.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueTopic } from '../../helpers/names.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { exited } from '../../support/spawn-worker.ts';
import { assertExactlyOnce, readCommitted, seed } from '../../support/pipeline-harness.ts';

/** The example's group: its stage name (examples/uppercase.ts). */
const GROUP = 'examples.uppercase';
const RECORDS = 4_000;

let bootstrap: string;
let dir: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
  dir = mkdtempSync(join(tmpdir(), 'hamstring-example-'));
});
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** examples/uppercase.yaml with the verifier's short timeouts (a dead member is noticed in 6 s) and a free health port. */
function exampleConfig(healthPort: number): string {
  const tree = parse(readFileSync('examples/uppercase.yaml', 'utf8')) as {
    environment: Record<string, unknown>;
    runtime: Record<string, unknown>;
  };
  tree.environment.kafka_consumer = {
    max_poll_interval_ms: 30_000,
    session_timeout_ms: 6_000,
    heartbeat_interval_ms: 1_000,
  };
  tree.environment.kafka_producer = {
    transaction_api_timeout_seconds: 10,
    transaction_timeout_ms: 30_000,
    message_timeout_ms: 20_000,
  };
  tree.runtime.health_port = healthPort;
  const path = join(dir, `uppercase-${healthPort}.yaml`);
  writeFileSync(path, stringify(tree));
  return path;
}

/** `hamstring run` of the example, as a user starts it (the bin sets the thread pool, tsx loads the .ts stage). */
function runExample(args: string[], env: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ['bin/hamstring.js', 'run', 'examples/uppercase.ts', ...args], {
    env: { ...process.env, HAMSTRING_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  children.push(child);
  return child;
}

async function ready(port: number): Promise<boolean> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`);
  return res.ok;
}

async function produceRaw(topic: string, records: { key: string; value: Buffer }[]): Promise<void> {
  const p = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'example-raw',
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: 60_000,
      apiTimeoutMs: 30_000,
    },
    silentLogger(),
  );
  await p.connect(30_000);
  for (const r of records) await p.produce({ topic, key: r.key, value: r.value });
  await p.flush(60_000);
  await p.close(10_000);
}

test('hamstring run of the example: killed -9 mid-stream and restarted, its output is exactly once, upper-cased, bad input dead-lettered', async () => {
  const input = uniqueTopic('example-in');
  const output = uniqueTopic('example-out');
  const env = {
    KAFKA_BOOTSTRAP_SERVERS: bootstrap,
    UPPERCASE_INPUT: input,
    UPPERCASE_OUTPUT: output,
    HAMSTRING_INSTANCE_ID: `example-${process.pid}`,
  };
  const firstPort = await freePort();
  const first = runExample(['--config', exampleConfig(firstPort), '--create-topics'], env);
  await waitFor(() => ready(firstPort), { timeoutMs: 90_000, message: 'the example is ready (/readyz)' });
  const metrics = await (await fetch(`http://127.0.0.1:${firstPort}/metrics`)).text();
  assert.match(metrics, /hamstring_worker_ready\{stage="examples.uppercase",instance="example-\d+"\} 1/);

  await produceRaw(input, [
    { key: 'word', value: Buffer.from('hello') },
    { key: 'bad', value: Buffer.from([0xff, 0xfe, 0xfd]) },
  ]);
  const seeding = seed(bootstrap, input, 0, RECORDS);
  const admin = createAdmin(bootstrap);
  const produced = async () => (await admin.watermarks(output)).reduce((n, w) => n + w.high, 0);
  try {
    await waitFor(async () => (await produced()) >= RECORDS / 4, {
      timeoutMs: 90_000,
      message: 'a quarter of the output produced',
    });
    const atKill = await produced();
    first.kill('SIGKILL');
    await exited(first);
    assert.ok(atKill < RECORDS, `killed mid-stream (${atKill} output records of ${RECORDS} at the kill)`);
    await seeding;

    const secondPort = await freePort();
    const second = runExample(['--config', exampleConfig(secondPort)], env);
    await assertExactlyOnce(bootstrap, {
      input,
      output,
      group: GROUP,
      expected: RECORDS,
      extra: 1, // HELLO
      timeoutMs: 120_000,
    });

    const words = (await readCommitted(bootstrap, output, RECORDS + 1)).filter(
      (r) => r.key?.toString() === 'word',
    );
    assert.deepEqual(
      words.map((r) => r.value?.toString()),
      ['HELLO'],
    );
    const deadLetters = await readCommitted(bootstrap, `${input}.DLT`, 1, 30_000);
    assert.deepEqual(
      deadLetters.map((r) => [r.key?.toString(), r.value?.toString('hex')]),
      [['bad', 'fffefd']],
    );
    assert.ok(await ready(secondPort), 'the restarted example is ready');
    second.kill('SIGTERM');
    await exited(second);
    assert.equal(second.exitCode, 0, 'a SIGTERM stops the example gracefully (exit 0)');
  } finally {
    admin.close();
  }
});
