import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { TransactionalWorker, type Stage } from '../../../src/runtime/index.ts';
import { defaultClients } from '../../../src/runtime/kafka-session.ts';
import type { KafkaClientFactory } from '../../../src/runtime/worker-options.ts';
import { syntheticKafkaError } from '../../../src/kafka/classify.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { FaultInjector } from '../../support/fault-injection.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import {
  assertExactlyOnce,
  createTopics,
  passThroughStage,
  seed,
  testKafkaOptions,
} from '../../support/pipeline-harness.ts';

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

const ALERTS = { windowMs: 120_000, repeatedRecoveries: 3, stallMs: 2_000 };

function worker(stage: Stage, instanceId: string, clients: KafkaClientFactory = defaultClients) {
  return new TransactionalWorker({
    stage,
    instanceId,
    mode: 'exactly-once',
    kafka: testKafkaOptions(bootstrap, { apiTimeoutMs: 3_000 }),
    batch: { size: 20, timeoutMs: 20 },
    log: silentLogger(),
    alerts: ALERTS,
    clients,
  });
}

const waitAlert = (
  w: TransactionalWorker,
  condition: string,
  extra: () => Record<string, unknown> = () => ({}),
  timeoutMs = 60_000,
) =>
  waitFor(() => w.status().alerts.includes(condition as never), {
    timeoutMs,
    message: `alert ${condition}`,
    observe: () => ({ alerts: w.status().alerts, ...extra() }),
  });

describe('four of the alert conditions, raised by a real worker (real broker; records_below_commit in the state tests)', () => {
  const running: TransactionalWorker[] = [];
  after(async () => {
    await Promise.all(running.map((w) => w.stop()));
  });

  test('no_commit_while_input_arrives: records consumed and no commit for stallMs; the next commit clears it', async () => {
    const [input, output, group] = [uniqueTopic('stall-in'), uniqueTopic('stall-out'), uniqueGroup('stall')];
    await createTopics(bootstrap, [input, output], 1);
    await seed(bootstrap, input, 0, 50);
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const base = passThroughStage(input, output, group);
    const w = worker(
      { ...base, process: async (records, ctx) => (await released, base.process(records, ctx)) },
      '0',
    );
    running.push(w);
    await w.start();
    await waitAlert(w, 'no_commit_while_input_arrives');
    assert.equal(w.status().committedTransactions, 0);
    release();
    await assertExactlyOnce(bootstrap, { input, output, group, expected: 50 });
    assert.ok(!w.status().alerts.includes('no_commit_while_input_arrives'), w.status().alerts.join(','));
  });

  test('max_poll_exceeded_or_unknown_member: a generation error on send-offsets', async () => {
    const [input, output, group] = [uniqueTopic('gen-in'), uniqueTopic('gen-out'), uniqueGroup('gen')];
    await createTopics(bootstrap, [input, output], 3);
    await seed(bootstrap, input, 0, 200);
    const faults = new FaultInjector([
      { operation: 'send-offsets', nth: 2, error: 'ILLEGAL_GENERATION', flags: { isTxnRequiresAbort: true } },
    ]);
    const w = worker(passThroughStage(input, output, group), '0', faults.wrap(defaultClients));
    running.push(w);
    assert.ok(!w.status().alerts.includes('max_poll_exceeded_or_unknown_member'));
    await w.start();
    await waitAlert(w, 'max_poll_exceeded_or_unknown_member');
    await assertExactlyOnce(bootstrap, { input, output, group, expected: 200 });
  });

  test('repeated_recovery_after_revoke and aborts_while_lag_grows: a member joins, then every transaction aborts while input keeps arriving', async () => {
    const [input, output, group] = [uniqueTopic('lag-in'), uniqueTopic('lag-out'), uniqueGroup('lag')];
    await createTopics(bootstrap, [input, output], 4);
    await seed(bootstrap, input, 0, 200);
    let failing = false;
    // An abortable error on every send-offsets while `failing`: each batch is aborted and rewound.
    const clients: KafkaClientFactory = {
      ...defaultClients,
      producer: (s, log) => {
        const p = defaultClients.producer(s, log);
        return {
          ...p,
          transactionalId: p.transactionalId,
          sendOffsets: (o, c) =>
            failing
              ? Promise.reject(
                  syntheticKafkaError('INVALID_PRODUCER_EPOCH', 'send-offsets', { isTxnRequiresAbort: true }),
                )
              : p.sendOffsets(o, c),
        };
      },
    };
    const a = worker(passThroughStage(input, output, group), 'a', clients);
    running.push(a);
    await a.start();
    await waitFor(() => a.status().committedTransactions > 0 && a.status().assigned.length === 4, {
      timeoutMs: 60_000,
      message: 'a holds every partition and commits',
    });
    const b = worker(passThroughStage(input, output, group), 'b');
    running.push(b);
    await b.start();
    await waitFor(() => b.status().assigned.length > 0 && a.status().assigned.length > 0, {
      timeoutMs: 60_000,
      message: 'the join revoked and shared the partitions',
    });
    assert.ok(!a.status().alerts.includes('repeated_recovery_after_revoke'));
    assert.ok(!a.status().alerts.includes('aborts_while_lag_grows'));
    failing = true;
    let seeded = 200;
    const lags: (number | undefined)[] = [];
    const feed = (async () => {
      while (failing) {
        await seed(bootstrap, input, seeded, 200);
        seeded += 200;
        lags.push((await a.metrics.lag.get()).values[0]?.value);
      }
    })();
    try {
      await waitAlert(a, 'repeated_recovery_after_revoke');
      await waitAlert(a, 'aborts_while_lag_grows', () => ({ lags: lags.slice(-10) }));
    } finally {
      failing = false;
      await feed;
    }
    assert.ok(!b.status().alerts.includes('repeated_recovery_after_revoke'), 'b recovered from nothing');
    // The gauge behind the alert: a partition without a position once made it NaN, so it never fired.
    assert.ok(
      lags.some((l) => Number.isFinite(l) && l! > 0),
      `the lag gauge reads numbers: ${lags.join(',')}`,
    );
    await assertExactlyOnce(bootstrap, { input, output, group, expected: seeded, timeoutMs: 120_000 });
  });
});
