import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { createProducer } from '../../../src/kafka/producer.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { DLT_HEADERS } from '../../../src/runtime/record-errors/dead-letter.ts';
import { TransactionalWorker, type Stage, type WorkerOptions } from '../../../src/runtime/index.ts';
import { captureLog } from '../../helpers/capture-log.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import type { FetchedRecord } from '../../../src/kafka/records.ts';
import { createTopics, readCommitted, testKafkaOptions } from '../../support/pipeline-harness.ts';
import { readUntil } from '../pipeline/support.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

const RECORDS = 20;
const BIG_AT = 7;

/** Seeds `0..19` into one partition; the stage turns record 7 into an output of `bigBytes`. */
async function seedInput(topic: string): Promise<void> {
  const p = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'refused-seed',
      transactionTimeoutMs: 30_000,
      messageTimeoutMs: 20_000,
      apiTimeoutMs: 10_000,
    },
    silentLogger(),
  );
  await p.connect(10_000);
  for (let i = 0; i < RECORDS; i += 1) await p.produce({ topic, partition: 0, value: String(i) });
  await p.flush(20_000);
  const failed = p.tally().failed;
  await p.close(5_000);
  assert.equal(failed, 0);
}

/**
 * Turns record 7 into an output of `bigBytes` (or each record named in `bigBytes` into an output of
 * its size). `bigLast`: the oversized outputs are produced after every other output of their batch.
 */
function stage(input: string, out: string, bigBytes: number | Map<number, number>, bigLast = false): Stage {
  const sizes = typeof bigBytes === 'number' ? new Map([[BIG_AT, bigBytes]]) : bigBytes;
  const size = (r: { value: Buffer | null }) => sizes.get(Number(r.value?.toString()));
  const isBig = (r: { value: Buffer | null }) => size(r) !== undefined;
  return {
    name: 'test.refused',
    inputTopics: [input],
    outputTopics: [out],
    process: (records) => ({
      outputs: [...records]
        .sort((a, b) => (bigLast ? Number(isBig(a)) - Number(isBig(b)) : 0))
        .map((r) => ({ topic: out, value: isBig(r) ? Buffer.alloc(size(r)!, 'b') : r.value, source: r })),
    }),
  };
}

async function world(outConfig: Record<string, string> = {}) {
  const [input, out] = [uniqueTopic('refused-in'), uniqueTopic('refused-out')];
  await createTopics(bootstrap, [input], 1);
  const admin = createAdmin(bootstrap);
  await admin.createTopics([{ topic: out, partitions: 1, replicationFactor: 1, config: outConfig }]);
  admin.close();
  await seedInput(input);
  return { input, out };
}

function worker(s: Stage, over: Partial<WorkerOptions> = {}): TransactionalWorker {
  return new TransactionalWorker({
    stage: s,
    instanceId: 'w0',
    mode: 'exactly-once',
    kafka: testKafkaOptions(bootstrap, { groupId: uniqueGroup('refused') }),
    batch: { size: 50, timeoutMs: 200 },
    log: silentLogger(),
    ...over,
  });
}

/** Options of a worker whose producer itself refuses records over 10,000 bytes. */
function producerLimited(): Partial<WorkerOptions> {
  return {
    kafka: testKafkaOptions(bootstrap, {
      groupId: uniqueGroup('refused'),
      producerOverrides: { 'message.max.bytes': 10_000 },
    }),
  };
}

/**
 * Every other record is output exactly once; each oversized one (record 7, or the offsets in
 * `reasons`) is dead-lettered once, saying why.
 */
async function assertDeadLetteredOnce(
  input: string,
  out: string,
  reason: RegExp | Map<number, RegExp>,
  w: TransactionalWorker,
) {
  const reasons = reason instanceof RegExp ? new Map([[BIG_AT, reason]]) : reason;
  const outputs = await readCommitted(bootstrap, out, RECORDS - reasons.size, 30_000);
  assert.deepEqual(
    outputs.map((r) => Number(r.value?.toString())).sort((a, b) => a - b),
    [...Array(RECORDS).keys()].filter((i) => !reasons.has(i)),
  );
  const dead = await readCommitted(bootstrap, `${input}.DLT`, reasons.size, 20_000);
  assert.equal(dead.length, reasons.size, 'each dead-lettered exactly once');
  for (const d of dead) {
    const h = d.headers;
    const offset = Number(h[DLT_HEADERS.offset]?.toString());
    assert.ok(reasons.has(offset), `dead letter for offset ${offset}`);
    assert.equal(h[DLT_HEADERS.errorKind]?.toString(), 'refused');
    assert.match(h[DLT_HEADERS.errorMessage]?.toString() ?? '', reasons.get(offset)!);
  }
  assert.equal(w.status().state, 'running', w.status().failure);
}

/**
 * Each dead letter leaves one warning naming where the record came from, why and where it went, and
 * never the record's content (DNS names are sensitive).
 */
function assertLoggedOnce(lines: Record<string, unknown>[], input: string): void {
  const deadLetterLines = lines.filter((l) => l.event === 'dead-letter');
  assert.equal(deadLetterLines.length, 1, `one dead-letter line: ${JSON.stringify(deadLetterLines)}`);
  const line = deadLetterLines[0]!;
  assert.equal(line.level, 40, 'logged at warn');
  assert.equal(line.topic, input);
  assert.equal(line.partition, 0);
  assert.equal(line.offset, BIG_AT);
  assert.equal(line.kind, 'refused');
  assert.equal(line.deadLetterTopic, `${input}.DLT`);
  assert.ok(!('value' in line) && !('key' in line), 'no record content');
}

describe('an output Kafka refuses goes through the record-error path (real 1-node broker)', () => {
  test("larger than the output topic's max.message.bytes: dead-lettered once, the rest output once, the worker runs on", async () => {
    const { input, out } = await world({ 'max.message.bytes': '3000' });
    const { log, lines } = captureLog();
    const w = worker(stage(input, out, 5_000), { log });
    await w.start();
    try {
      await assertDeadLetteredOnce(input, out, new RegExp(`${out}/0 \\(5000 bytes; .*max.message.bytes`), w);
      assertLoggedOnce(lines, input);
      // Usually the batch's commit ran behind the loop without waiting for its deliveries, failed
      // there, and the batch came back (once, or again when a replay's commit met the abort's
      // aftermath): its commit in the foreground named the refusal. On a loaded machine the broker's
      // refusal can arrive before the offsets are sent, which then fail in the foreground and name it
      // at once: no recovery at all. Either way rewinds only: no producer was replaced.
      const recoveries = lines.filter((l) => l.event === 'recovery');
      assert.deepEqual(
        recoveries.map((l) => l.action),
        recoveries.map(() => 'rewind'),
        JSON.stringify(recoveries.map((l) => l.err)),
      );
    } finally {
      await w.stop();
    }
  });

  test('the oversized output produced last in its batch: the producer is left clean for the second round', async () => {
    // The probe that finds the culprit ends in an aborted refusal, after which the producer's next
    // record to that partition comes back purged and a commit writing there fails; the worker
    // rewound and repeated the batch forever.
    const { input, out } = await world({ 'max.message.bytes': '3000' });
    const w = worker(stage(input, out, 5_000, true));
    await w.start();
    try {
      await assertDeadLetteredOnce(input, out, new RegExp(`${out}/0 \\(5000 bytes; .*max.message.bytes`), w);
    } finally {
      await w.stop();
    }
  });

  test("larger than the producer's message.max.bytes: dead-lettered once, the rest output once, the worker runs on", async () => {
    const { input, out } = await world();
    const w = worker(stage(input, out, 20_000), producerLimited());
    await w.start();
    try {
      await assertDeadLetteredOnce(
        input,
        out,
        /topic .* \(20000 bytes, larger than the producer's message.max.bytes \(10000\)\)/,
        w,
      );
    } finally {
      await w.stop();
    }
  });

  test("one output past the producer's limit and one past the topic's in the same batch: both dead-lettered once", async () => {
    // The client refuses the first before it is sent, so the commit fails without the broker ever
    // seeing the second: the second round's commit is refused for another record. Each round that
    // names a new record must lead to one more round, not to the loop's recovery (which refetched the
    // batch, met the same two refusals, and stopped the worker).
    const { input, out } = await world({ 'max.message.bytes': '3000' });
    const w = worker(
      stage(
        input,
        out,
        new Map([
          [3, 20_000],
          [12, 5_000],
        ]),
      ),
      producerLimited(),
    );
    await w.start();
    try {
      await assertDeadLetteredOnce(
        input,
        out,
        new Map([
          [3, /larger than the producer's message.max.bytes \(10000\)/],
          [12, new RegExp(`${out}/0 \\(5000 bytes; .*max.message.bytes`)],
        ]),
        w,
      );
    } finally {
      await w.stop();
    }
  });

  test('a null key to a compacted topic: only that record is dead-lettered, the records batched with it are output once', async () => {
    // The broker refuses the whole produce batch with INVALID_RECORD (naming the bad record by index,
    // KIP-467) and the client reports every record of that batch as refused: the bystanders must be
    // told from the culprit, not dead-lettered with it.
    const { input, out } = await world({ 'cleanup.policy': 'compact' });
    const keyed: Stage = {
      name: 'test.refused',
      inputTopics: [input],
      outputTopics: [out],
      process: (records) => ({
        outputs: records.map((r) => ({
          topic: out,
          key: r.value?.toString() === String(BIG_AT) ? null : `k${r.value?.toString() ?? ''}`,
          value: r.value,
          source: r,
        })),
      }),
    };
    const { log, lines } = captureLog();
    const w = worker(keyed, { log });
    await w.start();
    try {
      await assertDeadLetteredOnce(input, out, /refused record/, w);
      assertLoggedOnce(lines, input);
    } finally {
      await w.stop();
    }
  });

  test('with dead letters disabled, the worker stops with a message naming the topic, the record and the limit', async () => {
    const { input, out } = await world();
    const w = worker(stage(input, out, 20_000), {
      ...producerLimited(),
      recordErrors: { deadLetters: false },
    });
    await w.start();
    await waitFor(() => w.status().state === 'failed', { timeoutMs: 30_000, message: 'the worker stops' });
    await w.done();
    const failure = w.status().failure ?? '';
    assert.match(failure, new RegExp(`${input}:0@${BIG_AT}`));
    assert.match(failure, new RegExp(`topic ${out}`));
    assert.match(failure, /message.max.bytes \(10000\)/);
    const admin = createAdmin(bootstrap);
    const topics = await admin.listTopics();
    admin.close();
    assert.equal(
      topics.includes(`${input}.DLT`),
      false,
      'no dead-letter topic is created when dead letters are off',
    );
  });

  test('an output of several records that names none, refused: each record processed alone, only the culprit dead-lettered', async () => {
    // The stage joins a call's records into one output without a source, as the logserver frames
    // lines: the refusal of the call holding record 7 (5,000 bytes) names no record. Stopping after
    // the same refusal repeated was the loop's only answer.
    const { input, out } = await world({ 'max.message.bytes': '3000' });
    const value = (r: { value: Buffer | null }) =>
      Number(r.value?.toString()) === BIG_AT ? 'b'.repeat(5_000) : String(r.value);
    const joining: Stage = {
      name: 'test.refused-joined',
      inputTopics: [input],
      outputTopics: [out],
      process: (records) => ({ outputs: [{ topic: out, value: records.map(value).join(',') }] }),
    };
    const { log, lines } = captureLog();
    const w = worker(joining, { log });
    await w.start();
    try {
      const dead = await readCommitted(bootstrap, `${input}.DLT`, 1, 30_000);
      assert.deepEqual(
        dead.map((d) => [
          Number(d.headers[DLT_HEADERS.offset]?.toString()),
          d.headers[DLT_HEADERS.errorKind]?.toString(),
        ]),
        [[BIG_AT, 'refused']],
      );
      const values = (records: readonly FetchedRecord[]) =>
        records.flatMap((r) => r.value?.toString().split(',') ?? []).map(Number);
      const outputs = await readUntil(bootstrap, out, (rs) => values(rs).length >= RECORDS - 1, 30_000);
      assert.deepEqual(
        values(outputs).sort((a, b) => a - b),
        [...Array(RECORDS).keys()].filter((i) => i !== BIG_AT),
        'every other record output once',
      );
      assert.ok(
        lines.some((l) => l.event === 'refused-untraced'),
        'the untraced refusal was answered by processing the records alone',
      );
      assert.equal(w.status().state, 'running', w.status().failure);
    } finally {
      await w.stop();
    }
  });

  test('a declared output topic that does not exist stops the worker at start, naming it', async () => {
    const input = uniqueTopic('refused-in');
    const missing = uniqueTopic('no-such-output');
    await createTopics(bootstrap, [input], 1);
    const w = worker(stage(input, missing, 10));
    await w.start();
    await w.done();
    assert.equal(w.status().state, 'failed');
    assert.match(
      w.status().failure ?? '',
      new RegExp(`configuration error: output topic\\(s\\) ${missing} `),
    );
  });
});
