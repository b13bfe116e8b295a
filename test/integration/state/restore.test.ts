import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { retryingTransient } from '../../helpers/transient.ts';
import { createProducer, type ProducerPort } from '../../../src/kafka/producer.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { systemClock } from '../../../src/runtime/clock.ts';
import { StateConfigurationError } from '../../../src/runtime/state/changelog-topics.ts';
import { StateEngine } from '../../../src/runtime/state/state-engine.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueGroup, uniqueTopic, uniqueTransactionalId } from '../../helpers/names.ts';
import { createTopics, readCommitted } from '../../support/pipeline-harness.ts';

let bootstrap: string;
const root = mkdtempSync(join(tmpdir(), 'hamstring-restore-'));
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});
after(() => rmSync(root, { recursive: true, force: true }));

function engine(input: string, group: string, instance: string, registry = new Registry()) {
  return new StateEngine({
    stage: { name: 'test.counter', inputTopics: [input], stores: { counts: {} } },
    groupId: group,
    instanceId: instance,
    bootstrapServers: bootstrap,
    settings: { dir: root, replicationFactor: 1 },
    apiTimeoutMs: 10_000,
    clock: systemClock,
    log: silentLogger(),
    registry,
  });
}

/**
 * Prepares the engine as the worker does: a leader election of a changelog created a moment ago
 * (NOT_LEADER_FOR_PARTITION on its watermark read) is retried; the worker retries it in its
 * reconnect loop.
 */
async function prepared(e: StateEngine): Promise<StateEngine> {
  return retryingTransient(
    async () => {
      const admin = createAdmin(bootstrap);
      try {
        await e.prepare(admin);
        return e;
      } finally {
        admin.close();
      }
    },
    20_000,
    250,
  );
}

async function txProducer(): Promise<ProducerPort> {
  const p = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'state-test',
      transactionalId: uniqueTransactionalId('state'),
      transactionTimeoutMs: 30_000,
      messageTimeoutMs: 20_000,
      apiTimeoutMs: 10_000,
    },
    silentLogger(),
  );
  await p.connect(10_000);
  await p.initTransactions();
  return p;
}

/** One transaction that adds `by` to each key's count, committed or aborted. */
async function addCounts(
  e: StateEngine,
  p: ProducerPort,
  partition: number,
  keys: string[],
  by: number,
  outcome: 'commit' | 'abort',
) {
  await p.beginTransaction();
  const txn = e.begin();
  const store = e.partitionState(txn, partition).store<number>('counts');
  for (const k of keys) store.put(k, (store.get(k) ?? 0) + by);
  for (const r of e.changelogRecords(txn)) await p.produce(r);
  if (outcome === 'commit') {
    await p.commitTransaction();
    e.committed(txn, p.deliveredOffsets());
  } else {
    await p.abortTransaction();
    e.aborted(txn);
  }
}

function snapshot(e: StateEngine, partition: number): Record<string, number> {
  const txn = e.begin();
  const out = Object.fromEntries(e.partitionState(txn, partition).store<number>('counts').range());
  e.aborted(txn);
  return out;
}

async function metric(registry: Registry, name: string, labels: Record<string, string>): Promise<number> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  const v = (m?.values as { value: number; labels: Record<string, string> }[] | undefined)?.find((x) =>
    Object.entries(labels).every(([k, l]) => x.labels[k] === l),
  );
  return v?.value ?? 0;
}

describe('state restore on a real broker', () => {
  test('a new instance restores exactly the committed changes from the compacted changelog, none of an aborted transaction', async () => {
    const input = uniqueTopic('st-in');
    const group = uniqueGroup('st');
    await createTopics(bootstrap, [input], 2);
    const a = await prepared(engine(input, group, 'a'));
    a.assign([0, 1]);
    await a.restored();
    const p = await txProducer();
    const keys = Array.from({ length: 50 }, (_, i) => `k${i}`);
    for (let i = 0; i < 5; i++) await addCounts(a, p, 0, keys, 1, 'commit');
    await addCounts(a, p, 1, ['x'], 7, 'commit');
    await addCounts(a, p, 0, keys, 100, 'abort');
    assert.equal(snapshot(a, 0).k0, 5, 'the aborted change is not visible in memory');
    await p.close(10_000);
    await a.close();

    const changelog = [...a.changelogs.values()][0]!;
    const independent = await readCommitted(bootstrap, changelog, 5 * 50 + 1);
    const last = new Map(
      independent.map((r) => [`${r.partition}/${r.key!.toString()}`, Number(r.value!.toString())]),
    );
    assert.equal(last.get('0/k0'), 5, 'the changelog holds the committed value, not the aborted one');

    const registry = new Registry();
    const b = await prepared(engine(input, group, 'b', registry));
    b.assign([0, 1]);
    await b.restored();
    const restored0 = snapshot(b, 0);
    assert.deepEqual(restored0, Object.fromEntries(keys.map((k) => [k, 5])));
    assert.deepEqual(snapshot(b, 1), { x: 7 });
    assert.equal(
      await metric(registry, 'hamstring_state_restored_records_total', { source: 'changelog' }),
      5 * 50 + 1,
    );
    await b.close();
  });

  test('a restart after a clean stop reads the local copy in place and only the changelog tail', async () => {
    const input = uniqueTopic('st-in');
    const group = uniqueGroup('st');
    await createTopics(bootstrap, [input], 1);
    const a = await prepared(engine(input, group, 'same'));
    a.assign([0]);
    await a.restored();
    const p = await txProducer();
    const keys = Array.from({ length: 200 }, (_, i) => `k${i}`);
    for (let i = 0; i < 3; i++) await addCounts(a, p, 0, keys, 1, 'commit');
    await p.close(10_000);
    await a.close(p.deliveredOffsets());

    const registry = new Registry();
    const again = await prepared(engine(input, group, 'same', registry));
    again.assign([0]);
    await again.restored();
    assert.equal(snapshot(again, 0).k199, 3);
    assert.equal(await metric(registry, 'hamstring_state_restored_records_total', { source: 'local' }), 200);
    assert.equal(
      await metric(registry, 'hamstring_state_restored_records_total', { source: 'changelog' }),
      0,
    );

    // Another instance moves the changelog on; the local copy then needs exactly that tail.
    const other = await prepared(engine(input, group, 'other'));
    other.assign([0]);
    await other.restored();
    const p2 = await txProducer();
    await addCounts(other, p2, 0, ['k0', 'k1'], 10, 'commit');
    await p2.close(10_000);
    await other.close();
    await again.close();
    const registry3 = new Registry();
    const third = await prepared(engine(input, group, 'same', registry3));
    third.assign([0]);
    await third.restored();
    assert.equal(snapshot(third, 0).k0, 13);
    assert.equal(snapshot(third, 0).k5, 3);
    assert.equal(
      await metric(registry3, 'hamstring_state_restored_records_total', { source: 'changelog' }),
      2,
    );
    await third.close();
  });

  test('a local copy whose checkpoint is newer than the changelog end is wiped and restored in full', async () => {
    const input = uniqueTopic('st-in');
    const group = uniqueGroup('st');
    await createTopics(bootstrap, [input], 1);
    const a = await prepared(engine(input, group, 'w'));
    a.assign([0]);
    await a.restored();
    const p = await txProducer();
    await addCounts(a, p, 0, ['a', 'b'], 1, 'commit');
    await p.close(10_000);
    await a.close(p.deliveredOffsets());
    // The changelog is recreated empty (an operator's reset): the copy now claims records that are gone.
    const changelog = [...a.changelogs.values()][0]!;
    const admin = createAdmin(bootstrap);
    await admin.deleteTopics([changelog]);
    await new Promise((r) => setTimeout(r, 2_000));
    admin.close();
    const registry = new Registry();
    const b = await prepared(engine(input, group, 'w', registry));
    b.assign([0]);
    await b.restored();
    assert.deepEqual(snapshot(b, 0), {});
    assert.equal(
      await metric(registry, 'hamstring_state_local_copy_wiped_total', { reason: 'ahead-of-changelog' }),
      1,
    );
    await b.close();
  });

  test('a changelog whose partition count differs from the input fails the start, naming both topics', async () => {
    const input = uniqueTopic('st-in');
    const group = uniqueGroup('st');
    await createTopics(bootstrap, [input], 3);
    await createTopics(bootstrap, [`${group}-counts-changelog`], 2);
    await assert.rejects(
      prepared(engine(input, group, 'x')),
      (e: unknown) =>
        e instanceof StateConfigurationError &&
        e.message.includes(`${group}-counts-changelog has 2 partitions`) &&
        e.message.includes(`input topic ${input}`),
    );
  });
});
