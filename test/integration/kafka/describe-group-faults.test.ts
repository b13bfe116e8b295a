import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LocalKafkaCluster } from '../../../src/dev/kafka-cluster.ts';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { uniqueName } from '../../../src/kafka/binding-calls.ts';
import { startPrivateKafka } from '../../helpers/private-kafka.ts';

let bootstrap: string;
let cluster: LocalKafkaCluster;
let privateKafka: Awaited<ReturnType<typeof startPrivateKafka>> | undefined;
// A broker of its own: its faults would otherwise stall every file running beside it.
before(async () => {
  privateKafka = await startPrivateKafka('describe-faults');
  ({ bootstrap, cluster } = privateKafka);
});
after(async () => {
  await privateKafka?.stop();
});

/** Timeout of the descriptions asked while the broker is frozen (they must time out). */
const FROZEN_TIMEOUT_MS = 1_000;
const ROUNDS = 2;

/**
 * The runtime describes its group every few seconds (partition coverage), also while Kafka is
 * away. Two native defects made such a description kill the process once the broker came back:
 * librdkafka freed a timed-out coordinator request's handle and then used it (abort), and the
 * binding turned a group-level error result into a string from a NULL pointer (SIGSEGV). Both are
 * patched at install (patches/kafka-javascript/). Without the patches this file's process dies in
 * the first round (the abort is certain, the segfault a race), so a failure here is a crash of the
 * test process, reported with its signal.
 */
describe('describing a group across a frozen broker (1-node cluster)', () => {
  after(() => {
    for (const id of cluster.nodeIds()) cluster.resumeNode(id);
  });

  test('descriptions that time out while the broker is frozen leave the process and the client working', async () => {
    const group = uniqueName('describe-frozen');
    const [id] = cluster.nodeIds();
    for (let round = 1; round <= ROUNDS; round += 1) {
      // A fresh client knows no coordinator connection yet: its request waits for one, times out
      // meanwhile, and the connection comes up after the resume (the path that freed the handle).
      const admin = createAdmin(bootstrap, `describe-frozen-${round}`);
      try {
        await admin.listTopics(10_000);
        cluster.pauseNode(id!);
        try {
          const frozen = await Promise.allSettled(
            [0, 300, 600].map(async (delay) => {
              await new Promise((r) => setTimeout(r, delay));
              return admin.describeGroup(group, FROZEN_TIMEOUT_MS);
            }),
          );
          assert.ok(
            frozen.every((r) => r.status === 'rejected'),
            `round ${round}: no description while the broker is frozen: ${JSON.stringify(frozen)}`,
          );
        } finally {
          cluster.resumeNode(id!);
        }
        // The coordinator connection comes up now; the crashes happened here.
        await new Promise((r) => setTimeout(r, 4_000));
        const g = await admin.describeGroup(group, 10_000);
        assert.equal(g.groupId, group);
        assert.deepEqual(g.members, [], `round ${round}: a group nobody joined has no members`);
      } finally {
        admin.close();
      }
    }
  });
});
