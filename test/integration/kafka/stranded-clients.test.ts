import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LocalKafkaCluster } from '../../../src/dev/kafka-cluster.ts';
import { createReadCommittedReader, type RecordReader } from '../../../src/kafka/read-committed-reader.ts';
import { uniqueTopic } from '../../helpers/names.ts';
import { startPrivateKafka } from '../../helpers/private-kafka.ts';
import { longOr } from '../../helpers/long-run.ts';
import { createTopics, seed } from '../../support/pipeline-harness.ts';

let bootstrap: string;
let cluster: LocalKafkaCluster;
let privateKafka: Awaited<ReturnType<typeof startPrivateKafka>> | undefined;
// A broker of its own: its faults would otherwise stall every file running beside it.
before(async () => {
  privateKafka = await startPrivateKafka('stranded');
  ({ bootstrap, cluster } = privateKafka);
});
after(async () => {
  await privateKafka?.stop();
});

const RECORDS = 50;
const READERS = 60;
// Longer than the test broker's broker.session.timeout.ms (5 s): its own controller fences it.
const PAUSE_MS = 12_000;
/** Rounds of pause-and-create before the test admits it stranded nothing (each costs ~20 s). */
const MAX_ROUNDS = longOr(1, 4);

/** Reads until every record is in (or the deadline); returns how many distinct and total. */
async function readAll(reader: RecordReader): Promise<{ distinct: number; total: number }> {
  const values = new Set<string>();
  let total = 0;
  const deadline = Date.now() + 60_000;
  while (values.size < RECORDS && Date.now() < deadline) {
    for (const r of await reader.consume(RECORDS, 200)) {
      values.add(r.value?.toString() ?? '');
      total += 1;
    }
  }
  await reader.close(10_000);
  return { distinct: values.size, total };
}

/**
 * A KRaft broker fenced by a pause answers Metadata with no brokers for a moment after it resumes,
 * and librdkafka then forgets its only broker for good (librdkafka #5301). Clients created in that
 * moment used to sit forever without a group or a record (the flaky broker-fault test of CI). They
 * are created here by the dozen right after the resume; a few of each hundred land in the moment, so a stranded reader shows up in most runs.
 */
describe('clients stranded by a fenced broker (1-node cluster)', () => {
  after(async () => {
    for (const id of cluster.nodeIds()) if (!cluster.isNodeRunning(id)) await cluster.startNode(id);
  });

  test('readers created as a fenced broker comes back all read everything once, a replaced one included', async (t) => {
    const topic = uniqueTopic('stranded');
    await createTopics(bootstrap, [topic], 3);
    await seed(bootstrap, topic, 0, RECORDS);
    // Stranding is a race with the broker's fence; rounds repeat until a client was really
    // stranded (and replaced), so a pass says the replacement works, not only that nothing happened.
    const perRound: number[] = [];
    for (let round = 1; round <= MAX_ROUNDS && !perRound.some((n) => n > 0); round += 1) {
      const [id] = cluster.nodeIds();
      cluster.pauseNode(id!);
      try {
        await new Promise((r) => setTimeout(r, PAUSE_MS));
      } finally {
        cluster.resumeNode(id!);
      }
      // Connect them all before any reads: a consume holds a libuv thread, and the connects (which
      // fetch the metadata that strands a client) must not wait behind them past the moment.
      const readers: RecordReader[] = [];
      const connects: Promise<void>[] = [];
      for (let i = 0; i < READERS; i += 1) {
        const reader = createReadCommittedReader({ bootstrap, clientId: `stranded-${round}-${i}` });
        readers.push(reader);
        connects.push(reader.connect(30_000).then(() => reader.subscribe([topic])));
        await new Promise((r) => setTimeout(r, 5));
      }
      await Promise.all(connects);
      const results = await Promise.all(readers.map((reader) => readAll(reader)));
      perRound.push(readers.filter((r) => r.replacements > 0).length);
      results.forEach((res, i) =>
        assert.deepEqual(
          res,
          { distinct: RECORDS, total: RECORDS },
          `round ${round}, reader ${i} (client replaced ${readers[i]!.replacements} times)`,
        ),
      );
    }
    const stranded = perRound.reduce((a, b) => a + b, 0);
    t.diagnostic(
      `readers stranded and replaced per round of ${READERS}: ${perRound.join(', ')} (${stranded} in total)`,
    );
    if (stranded === 0)
      t.skip(`no client was stranded in ${MAX_ROUNDS} rounds: the replacement was not exercised this run`);
  });
});
