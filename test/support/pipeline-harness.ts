import { createAdmin, type AdminPort } from '../../src/kafka/admin.ts';
import { verifyKafkaOptions } from '../../src/verify/settings.ts';
import { createReadCommittedReader } from '../../src/kafka/read-committed-reader.ts';
import { MetadataClient } from '../../src/kafka/admin-metadata.ts';
import { createProducer, type ProducerPort } from '../../src/kafka/producer.ts';
import { KafkaError } from '../../src/kafka/kafka-error.ts';
import { isStrandedError } from '../../src/kafka/stranded-client.ts';
import type { FetchedRecord } from '../../src/kafka/records.ts';
import { silentLogger } from '../../src/observability/logger.ts';
import type { Stage } from '../../src/runtime/stage.ts';
import { uniqueGroup } from '../helpers/names.ts';
import { retryingTransient } from '../helpers/transient.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { checkOutput, isExactlyOnce, type OutputVerdict } from '../../src/verify/check.ts';

/** Worker Kafka options for tests: the verifier's short timeouts, so faults resolve quickly. */
export const testKafkaOptions = verifyKafkaOptions;

/**
 * Copies every input record to `out` unchanged (key, value, partition by key). Without `name` the
 * stage (hence its group and transactional id) is named uniquely, so files running at once never
 * share a group or fence each other's producer.
 */
export function passThroughStage(input: string, out: string, name = uniqueGroup('test.passthrough')): Stage {
  return {
    name,
    inputTopics: [input],
    outputTopics: [out],
    process: (records) => ({ outputs: records.map((r) => ({ topic: out, key: r.key, value: r.value })) }),
  };
}

export async function createTopics(
  bootstrap: string,
  topics: string[],
  partitions: number,
  rf = 1,
): Promise<void> {
  const admin = createAdmin(bootstrap);
  try {
    // Right after a broker pause or restart its controller may not answer within one call.
    await retryingTransient(
      () =>
        admin.createTopics(
          topics.map((topic) => ({ topic, partitions, replicationFactor: rf })),
          10_000,
        ),
      60_000,
    );
    // The broker answers before its metadata lists the topics; code under test that looks them up
    // at once would otherwise see them missing (and, e.g., create a changelog that already exists).
    await waitFor(
      async () => {
        const counts = await admin.partitionCounts(topics);
        return topics.every((t) => counts.get(t) === partitions);
      },
      { timeoutMs: 15_000, message: `topics ${topics.join(', ')} in the cluster's metadata` },
    );
  } finally {
    admin.close();
  }
}

/** A test's own producer (not connected yet), with the timeouts a test's writes need. */
export function testProducer(bootstrap: string, clientId: string): ProducerPort {
  return createProducer(
    {
      bootstrapServers: bootstrap,
      clientId,
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: 60_000,
      apiTimeoutMs: 30_000,
    },
    silentLogger(),
  );
}

/**
 * Seeds `count` records, value `<i>` keyed `k-<i % keys>`: the value is the sequence number, so the
 * output can be checked for loss, duplicates and per-key order. A seed whose client was stranded
 * (stranded-client.ts; it happens right after a broker fault) is run again with a new client, but
 * only when the topic's end offsets show that nothing of it reached Kafka: a record written before
 * its delivery report came back would otherwise be seeded twice, and a test would count the
 * duplicate input as an output its worker doubled. Where the ends cannot be read, such a seed fails
 * instead, saying so.
 */
export async function seed(
  bootstrap: string,
  topic: string,
  from: number,
  count: number,
  keys = 64,
): Promise<void> {
  const endBefore = await topicEnd(bootstrap, topic);
  for (let attempt = 1; ; attempt += 1) {
    const p = testProducer(bootstrap, 'seed');
    try {
      await p.connect(30_000);
      for (let i = from; i < from + count; i += 1)
        await p.produce({ topic, key: `k-${i % keys}`, value: String(i) });
      await p.flush(60_000);
    } catch (e) {
      await p.close(1_000);
      const stranded = e instanceof KafkaError && isStrandedError(e);
      // Unknown ends (Kafka did not say) never count as "nothing reached it".
      const untouched = endBefore !== undefined && (await topicEnd(bootstrap, topic)) === endBefore;
      if (attempt < 3 && stranded && untouched) continue;
      if (stranded)
        throw new Error(`seeding ${topic} stranded after some of its records reached Kafka`, { cause: e });
      throw e;
    }
    const t = p.tally();
    await p.close(10_000);
    if (t.failed > 0) throw new Error(`seeding failed for ${t.failed} records: ${t.firstError?.message}`);
    return;
  }
}

/**
 * The sum of a topic's high watermarks (how many offsets its partitions hold), or undefined when
 * Kafka did not say within 20 s. Each try has a client of its own: one made right after a broker
 * fault can be stranded (stranded-client.ts), as the seed's own producer can.
 */
async function topicEnd(bootstrap: string, topic: string): Promise<number | undefined> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const client = new MetadataClient(bootstrap, 'seed-watermarks');
    try {
      const md = await client.metadata({ topic, timeout: 5_000 });
      // A topic the seed itself creates (auto-creation) holds nothing yet.
      if (!md.topics.some((t) => t.name === topic && t.partitions.length > 0)) return 0;
      const marks = await client.watermarks(topic, 5_000);
      return marks.reduce((sum, m) => sum + m.high, 0);
    } catch {
      if (Date.now() > deadline) return undefined;
    } finally {
      client.close();
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Reads a topic from the start with read_committed until `expected` records or the deadline. */
export async function readCommitted(
  bootstrap: string,
  topic: string,
  expected: number,
  timeoutMs = 60_000,
): Promise<FetchedRecord[]> {
  const out: FetchedRecord[] = [];
  const c = createReadCommittedReader({ bootstrap, clientId: 'reader' });
  await c.connect(30_000);
  c.subscribe([topic]);
  const deadline = Date.now() + timeoutMs;
  // After reaching the expected count keep reading, so duplicates beyond it show up: to the end of
  // every partition, or for 1.5 s.
  let settleUntil: number | undefined;
  while (Date.now() < deadline) {
    out.push(...(await c.consume(1000, 200)));
    if (out.length >= expected) settleUntil ??= Date.now() + 1_500;
    if (settleUntil !== undefined && (Date.now() > settleUntil || c.atEnd())) break;
  }
  await c.close(10_000);
  return out;
}

/**
 * The verifier's verdict (src/verify/check.ts) over what a read_committed reader saw: one checker for
 * tests and `hamstring verify`, with order per key and per partition, and re-reads of the same
 * partition+offset (a reader that rebalanced) not counted as duplicates.
 */
export type ExactlyOnceReport = OutputVerdict;

/** Checks the output of a pass-through run against the seeded sequence 0..expected-1. */
export function checkExactlyOnce(records: FetchedRecord[], expected: number): ExactlyOnceReport {
  return checkOutput(
    records.map((r) => ({
      partition: r.partition,
      offset: r.offset,
      key: r.key?.toString() ?? '',
      seq: Number(r.value?.toString()),
      attempts: [],
    })),
    expected,
  );
}

/** Committed offsets of the group equal the input's high watermarks (nothing left, nothing skipped). */
export async function committedMatchesEnd(
  admin: AdminPort,
  group: string,
  topic: string,
): Promise<{ ok: boolean; detail: string }> {
  // Right after a broker restart its group coordinator may not answer within one call's timeout.
  const [marks, committed] = await retryingTransient(
    async () => [await admin.watermarks(topic), await admin.groupOffsets(group, [topic])] as const,
  );
  const byPart = new Map(committed.map((c) => [c.partition, c.offset]));
  const bad = marks.filter((m) => (byPart.get(m.partition) ?? -1) !== m.high && m.high > 0);
  return {
    ok: bad.length === 0,
    detail: marks
      .map((m) => `${m.partition}: committed ${byPart.get(m.partition)} high ${m.high}`)
      .join(', '),
  };
}

/** Asserts the exactly-once invariants of a pass-through run over seeds 0..expected-1. */
export async function assertExactlyOnce(
  bootstrap: string,
  args: {
    input: string;
    output: string;
    group: string;
    expected: number;
    /** Records outside the sequence that the run outputs too (exactly this many; e.g. a hand-made one). */
    extra?: number;
    timeoutMs?: number;
  },
): Promise<ExactlyOnceReport> {
  const extra = args.extra ?? 0;
  const records = await readCommitted(
    bootstrap,
    args.output,
    args.expected + extra,
    args.timeoutMs ?? 90_000,
  );
  const report = checkExactlyOnce(records, args.expected);
  const admin = createAdmin(bootstrap);
  try {
    const offsets = await committedMatchesEnd(admin, args.group, args.input);
    const problems: string[] = [];
    if (!isExactlyOnce({ ...report, unexpected: report.unexpected - extra }))
      problems.push(JSON.stringify(report.samples));
    if (report.unexpected !== extra)
      problems.push(`${report.unexpected} records outside the sequence, expected ${extra}`);
    if (!offsets.ok) problems.push(`committed offsets differ from the input's end: ${offsets.detail}`);
    if (problems.length > 0)
      throw new Error(`exactly-once violated: ${problems.join('; ')} (${JSON.stringify(report)})`);
  } finally {
    admin.close();
  }
  return report;
}
