import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startDashboard, type Dashboard } from '../../../src/app/dashboard/index.ts';
import { StageInstances, type StageInstancesView } from '../../../src/app/dashboard/stage-instances.ts';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { TransactionalWorker } from '../../../src/runtime/index.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { createTopics, passThroughStage, testKafkaOptions } from '../../support/pipeline-harness.ts';

/*
 * The pipeline page's instances panel on a real broker: two workers of one stage share its four
 * input partitions; the dashboard shows both, on this machine, with the partitions each holds, and
 * after one stops, the other with all four. A stage with no running worker shows none.
 */
let bootstrap: string;
let dashboard: Dashboard | undefined;
const workers: TransactionalWorker[] = [];

before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

after(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await dashboard?.close();
});

test('two instances of a stage share its partitions on the page; when one stops the other holds them all', async () => {
  const [input, output, group] = [uniqueTopic('inst-in'), uniqueTopic('inst-out'), uniqueGroup('inst')];
  await createTopics(bootstrap, [input], 4);
  await createTopics(bootstrap, [output], 1);
  const idle = uniqueGroup('inst-idle');
  const ch = await testClickHouse();
  dashboard = await startDashboard({
    port: 0,
    clickhouse: { url: ch.url, database: 'default', connectTimeoutMs: 2_000, requestTimeoutMs: 5_000 },
    refreshMs: 200,
    instances: new StageInstances(
      [
        { label: 'pass', group },
        { label: 'idle', group: idle },
      ],
      () => createAdmin(bootstrap, 'instances-test'),
    ),
    log: silentLogger(),
  });
  const stage = passThroughStage(input, output, group);
  for (const id of ['a', 'b']) {
    const w = new TransactionalWorker({
      stage,
      instanceId: id,
      mode: 'exactly-once',
      kafka: testKafkaOptions(bootstrap),
      batch: { size: 20, timeoutMs: 20 },
      log: silentLogger(),
    });
    workers.push(w);
    await w.start();
  }
  const view = async () => {
    const res = await fetch(new URL('/api/instances', dashboard?.url));
    assert.equal(res.status, 200);
    return (await res.json()) as StageInstancesView[];
  };
  const partitionsOf = (v: StageInstancesView[]) =>
    Object.fromEntries(
      (v.find((s) => s.stage === 'pass')?.machines ?? []).flatMap((m) =>
        m.instances.map((i) => [`${m.host} ${i.instance}`, i.partitions]),
      ),
    );
  const all = [0, 1, 2, 3].map((p) => `${input}:${p}`);

  let last: StageInstancesView[] = [];
  await waitFor(
    async () => {
      last = await view();
      const held = Object.values(partitionsOf(last));
      return (
        held.length === 2 && held.every((p) => p.length === 2) && held.flat().sort().join() === all.join()
      );
    },
    { timeoutMs: 60_000, message: 'both instances, two partitions each', observe: () => last },
  );
  const pass = last.find((s) => s.stage === 'pass');
  assert.equal(pass?.state, 'Stable');
  assert.deepEqual(
    pass?.machines.map((m) => m.host),
    ['127.0.0.1'],
    'both on this machine, as the coordinator sees them',
  );
  const ids = pass?.machines[0]?.instances.map((i) => i.instance) ?? [];
  assert.equal(ids.length, 2);
  // The consumer's client id: stage name, instance id, then the client's own suffix.
  ['a', 'b'].forEach((id, i) =>
    assert.ok(ids[i]?.startsWith(`${group}-${id}-`), `instance ${id} by its client id: ${ids[i]}`),
  );
  const idleView = last.find((s) => s.stage === 'idle');
  assert.deepEqual(idleView?.machines, [], 'a stage with no running worker has no instance');
  assert.equal(idleView?.error, undefined);

  await workers.shift()?.stop();
  await waitFor(
    async () => {
      last = await view();
      const held = Object.entries(partitionsOf(last));
      return (
        held.length === 1 &&
        held[0]?.[0].startsWith(`127.0.0.1 ${group}-b-`) === true &&
        held[0][1].join() === all.join()
      );
    },
    { timeoutMs: 60_000, message: 'the remaining instance holds all four partitions', observe: () => last },
  );
});
