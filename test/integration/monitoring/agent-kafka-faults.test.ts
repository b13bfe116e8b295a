import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LocalKafkaCluster } from '../../../src/dev/kafka-cluster.ts';
import type { MonitoringAgent } from '../../../src/app/monitoring-agent.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { startPrivateKafka } from '../../helpers/private-kafka.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { testKafkaOptions } from '../../support/pipeline-harness.ts';
import { CapturedLog, counts, monitoringWorld, produce, rows, startAgent, testConfig } from './support.ts';

let bootstrap: string;
let cluster: LocalKafkaCluster;
let chUrl: string;
let privateKafka: Awaited<ReturnType<typeof startPrivateKafka>> | undefined;
// A broker of its own: its faults would otherwise stall every file running beside it.
before(async () => {
  const [k, ch] = await Promise.all([startPrivateKafka('agent-faults'), testClickHouse()]);
  privateKafka = k;
  bootstrap = k.bootstrap;
  cluster = k.cluster;
  chUrl = ch.url;
});
after(async () => {
  await privateKafka?.stop();
});

/** The agent's Kafka API timeout in these tests; the broker is stopped for longer than this. */
const API_TIMEOUT_MS = 4_000;

describe('monitoring agent under Kafka faults and group changes', () => {
  const agents: MonitoringAgent[] = [];
  const paused = new Set<number>();
  after(async () => {
    for (const id of paused) cluster.resumeNode(id);
    await Promise.all(agents.map((a) => a.stop()));
  });

  test('Kafka stopped (SIGSTOP) longer than the API timeout while rows flow, then resumed: every row once, the agent recovers by itself', async () => {
    const world = await monitoringWorld(bootstrap, ['logline_to_batches'], 3);
    const log = new CapturedLog();
    let inserted = 0;
    const agent = await startAgent(testConfig(bootstrap, chUrl), bootstrap, world, {
      log: log.logger,
      kafka: testKafkaOptions(bootstrap, { groupId: world.group, apiTimeoutMs: API_TIMEOUT_MS }),
      hooks: {
        // Slow inserts: the backlog is still being inserted and committed when the broker freezes.
        afterInsert: async ({ rows: n }) => {
          inserted += n;
          await new Promise((r) => setTimeout(r, 20));
        },
      },
    });
    agents.push(agent);
    await produce(bootstrap, rows(world, 'logline_to_batches', 0, 3_000));
    await waitFor(() => inserted > 0, { timeoutMs: 60_000, message: 'rows flowing into ClickHouse' });

    // A test producer would hang on the frozen broker's open sockets past its message timeout;
    // the rows that flow during the freeze are the backlog the agent is working through.
    const [id] = cluster.nodeIds();
    cluster.pauseNode(id!);
    paused.add(id!);
    const insertedAtPause = inserted;
    // The fault's duration (not a wait for a condition): longer than the API timeout and the session timeout.
    await new Promise((r) => setTimeout(r, API_TIMEOUT_MS * 2.5));
    cluster.resumeNode(id!);
    paused.delete(id!);
    assert.ok(insertedAtPause < 3_000, `the broker froze mid-stream (${insertedAtPause} rows inserted)`);
    await waitFor(() => agent.worker.status().ready && agent.worker.status().state === 'running', {
      timeoutMs: 60_000,
      message: 'the agent consumes again without a restart',
      observe: () => ({ status: agent.worker.status(), log: log.messages().slice(-15) }),
    });
    // New rows after the freeze. A record the test producer reports as timed out may still have been
    // written; producing the chunk again is harmless: the same identities collapse in ClickHouse.
    const late = rows(world, 'logline_to_batches', 3_000, 500);
    await produce(bootstrap, late).catch(() => produce(bootstrap, late));

    await waitFor(async () => (await counts(chUrl, world.database, 'logline_to_batches')).dedup === 3_500, {
      timeoutMs: 120_000,
      message: 'all 3500 rows after the broker resumed',
      observe: () => ({ status: agent.worker.status(), log: log.messages().slice(-15) }),
    });
    const c = await counts(chUrl, world.database, 'logline_to_batches');
    assert.equal(c.dedup, 3_500);
    assert.equal(c.distinct, 3_500);
    assert.ok(c.raw >= 3_500, `raw ${c.raw}`);
    await waitFor(() => agent.worker.status().ready && agent.worker.status().state === 'running', {
      timeoutMs: 30_000,
      message: 'the agent consumes again without a restart',
      observe: () => agent.worker.status(),
    });
    assert.equal(agent.outages, 0, 'a Kafka fault is not a ClickHouse outage');
    await agent.stop();
  });

  test('a second agent joins the group while the first inserts a large backlog: no row lost', async () => {
    const tables = ['logline_to_batches', 'fill_levels'] as const;
    const world = await monitoringWorld(bootstrap, [...tables], 4);
    const expected = { logline_to_batches: 6_000, fill_levels: 2_000 };
    await produce(bootstrap, [
      ...rows(world, 'logline_to_batches', 0, expected.logline_to_batches),
      ...rows(world, 'fill_levels', 0, expected.fill_levels),
    ]);
    let inserts = 0;
    let second: Promise<MonitoringAgent> | undefined;
    const config = testConfig(bootstrap, chUrl, { insertBatch: 50, kafkaBatch: 500 });
    const first = await startAgent(config, bootstrap, world, {
      instanceId: 'agent-1',
      hooks: {
        afterInsert: async () => {
          inserts += 1;
          // Slow inserts keep a batch in flight; the second member joins in the middle of one.
          await new Promise((r) => setTimeout(r, 15));
          if (inserts === 3)
            second = startAgent(config, bootstrap, world, { instanceId: 'agent-2' }).then((a) => {
              agents.push(a);
              return a;
            });
        },
      },
    });
    agents.push(first);
    await waitFor(() => second !== undefined, { timeoutMs: 60_000, message: 'the first agent inserting' });
    const joined = await second!;
    await waitFor(() => joined.worker.status().assigned.length > 0, {
      timeoutMs: 60_000,
      message: 'the second agent got partitions',
      observe: () => [first.worker.status().assigned, joined.worker.status().assigned],
    });
    for (const [table, n] of Object.entries(expected)) {
      await waitFor(async () => (await counts(chUrl, world.database, table)).dedup === n, {
        timeoutMs: 120_000,
        message: `${n} rows in ${table}`,
        observe: () => [first.worker.status(), joined.worker.status()],
      });
      const c = await counts(chUrl, world.database, table);
      assert.equal(c.distinct, n, `${table} distinct`);
      assert.ok(c.raw >= n, `${table} raw ${c.raw} >= ${n}`);
    }
    const changes = (await first.worker.metrics.epochChanges.get()).values;
    const revoked = changes.find((v) => v.labels.cause === 'revoke')?.value ?? 0;
    assert.ok(
      revoked >= 1,
      `the first member gave partitions up while it worked: ${JSON.stringify(changes)}`,
    );
    const insertedBy = async (a: MonitoringAgent) =>
      (await a.metrics.rowsInserted.get()).values.reduce((s, v) => s + v.value, 0);
    const [one, two] = [await insertedBy(first), await insertedBy(joined)];
    assert.ok(one > 0 && two > 0, `both members inserted: ${one} and ${two}`);
    assert.ok(one + two >= 8_000, `every row inserted at least once: ${one} + ${two}`);
    await Promise.all([first.stop(), joined.stop()]);
  });
});
