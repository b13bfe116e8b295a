import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, TransactionalWorker, workerOptionsFromConfig, type Stage } from '../../../src/index.ts';
import { DLT_HEADERS } from '../../../src/runtime/index.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { checkExactlyOnce, createTopics, readCommitted, seed } from '../../support/pipeline-harness.ts';

const MAX_DELIVERIES = 2;
const RECORDS = 40;

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

/** A config.yaml as a user writes one: this broker, a short processing timeout, max_deliveries 2. */
function writeConfig(attemptsTopic: string): string {
  const [host, port] = bootstrap.split(':');
  const path = join(mkdtempSync(join(tmpdir(), 'hamstring-runtime-example-')), 'config.yaml');
  writeFileSync(
    path,
    `
environment:
  kafka_brokers: [{ hostname: ${host}, internal_port: ${port}, external_port: ${port} }]
  monitoring: { clickhouse_server: { hostname: 127.0.0.1 } }
  kafka_consumer: { session_timeout_ms: 6000, heartbeat_interval_ms: 1000 }
  kafka_transaction_batch: { size: 10, timeout_ms: 50 }
  record_errors:
    max_deliveries: ${MAX_DELIVERIES}
    processing_timeout_ms: 1000
    delivery_attempts_topic: ${attemptsTopic}
`,
  );
  return path;
}

const seq = (v: Buffer | null) => Number(v?.toString());

test('the one-page example of docs/runtime.md dead-letters a record that never completes after max_deliveries', async () => {
  const input = uniqueTopic('example-in');
  const output = uniqueTopic('example-out');
  const group = uniqueGroup('example');
  await createTopics(bootstrap, [input, output, `${input}.DLT`], 1);
  await seed(bootstrap, input, 0, RECORDS);
  const poisonDeliveries: number[] = [];

  // From here on the example as written, with this test's topics and a stage whose record 0 never completes.
  const config = loadConfig({ path: writeConfig(uniqueTopic('attempts')) });
  const stage: Stage = {
    name: group,
    inputTopics: [input],
    outputTopics: [output],
    async process(records) {
      if (records.some((r) => seq(r.value) === 0)) {
        poisonDeliveries.push(Date.now());
        await new Promise(() => undefined); // never completes: abandoned at processing_timeout_ms
      }
      return { outputs: records.map((r) => ({ topic: output, key: r.key, value: r.value, source: r })) };
    },
  };
  const worker = new TransactionalWorker(workerOptionsFromConfig({ config, stage }));
  await worker.start();
  try {
    const dlt = await readCommitted(bootstrap, `${input}.DLT`, 1, 60_000);
    assert.equal(dlt.length, 1, 'the record that never completes is dead-lettered');
    assert.equal(seq(dlt[0]!.value), 0);
    assert.equal(dlt[0]!.headers[DLT_HEADERS.errorKind]?.toString(), 'redelivery-exhausted');
    // Delivered MAX_DELIVERIES times in its batch, then MAX_DELIVERIES times alone while the
    // partition is searched record by record; then dead-lettered unprocessed.
    assert.equal(poisonDeliveries.length, 2 * MAX_DELIVERIES);
    const report = checkExactlyOnce(await readCommitted(bootstrap, output, RECORDS - 1, 60_000), RECORDS);
    assert.equal(report.duplicates, 0);
    assert.equal(report.lost, 1, 'only the poison record is missing from the output');
  } finally {
    await worker.stop();
  }
});
