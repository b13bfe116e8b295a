import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FaultInjector, type FaultRule } from '../../support/fault-injection.ts';
import { TransactionalWorker } from '../../../src/runtime/index.ts';
import { defaultClients } from '../../../src/runtime/kafka-session.ts';
import { strandedError } from '../../../src/kafka/stranded-client.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { uniqueTopic, uniqueGroup } from '../../helpers/names.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
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

/** Runs a pass-through worker whose Kafka port fails as the rules say; returns it after exactly-once holds. */
/**
 * The pass-through run of 600 records with `rules` injected, checked exactly once; with `until`, the
 * worker also runs on until it holds (a fault timed by the clock rather than by a call).
 */
async function runWith(
  rules: FaultRule[],
  name: string,
  clients = defaultClients,
  until?: { holds: () => boolean; what: string },
) {
  const input = uniqueTopic(`${name}-in`);
  const output = uniqueTopic(`${name}-out`);
  const group = uniqueGroup(name);
  await createTopics(bootstrap, [input, output], 3);
  await seed(bootstrap, input, 0, 600);
  const faults = new FaultInjector(rules);
  const w = new TransactionalWorker({
    stage: passThroughStage(input, output, group),
    instanceId: '0',
    mode: 'exactly-once',
    kafka: testKafkaOptions(bootstrap, { apiTimeoutMs: 3_000 }),
    batch: { size: 50, timeoutMs: 50 },
    log: silentLogger(),
    clients: faults.wrap(clients),
  });
  await w.start();
  try {
    await assertExactlyOnce(bootstrap, { input, output, group, expected: 600 });
    if (until) await waitFor(until.holds, { timeoutMs: 60_000, message: until.what });
  } finally {
    await w.stop();
  }
  assert.ok(rules.length === 0 || faults.injected.length > 0, 'the fault was injected');
  const recoveries = (await w.metrics.recoveries.get()).values;
  const aborts = (await w.metrics.aborts.get()).values.reduce((s, v) => s + v.value, 0);
  const by = (kind: string, action: string) =>
    recoveries.find((v) => v.labels.kind === kind && v.labels.action === action)?.value ?? 0;
  return { w, faults, by, aborts };
}

describe('recovery from errors injected at the Kafka port (real broker)', () => {
  test('ILLEGAL_GENERATION on send-offsets aborts, resubscribes a fresh consumer and re-consumes', async () => {
    const { by, aborts } = await runWith(
      [
        {
          operation: 'send-offsets',
          nth: 2,
          error: 'ILLEGAL_GENERATION',
          flags: { isTxnRequiresAbort: true },
        },
      ],
      'illgen',
    );
    assert.equal(by('membership', 'reset-consumer'), 1);
    assert.ok(aborts >= 1);
  });

  test('a retriable commit error is retried in place with no abort', async () => {
    const { by, aborts, faults } = await runWith(
      [
        {
          operation: 'commit-transaction',
          nth: 2,
          times: 2,
          error: '_TIMED_OUT',
          flags: { isRetriable: true },
        },
      ],
      'retry',
    );
    assert.equal(aborts, 0);
    assert.equal(by('retriable', 'recreate-producer'), 0);
    assert.ok(faults.calls('commit-transaction') >= 4);
  });

  test('a commit whose outcome stays unknown past the API timeout recreates the producer and re-consumes', async () => {
    // Every attempt within the 3 s API timeout fails before reaching the broker.
    const { by } = await runWith(
      [
        {
          operation: 'commit-transaction',
          nth: 3,
          times: 12,
          error: '_TIMED_OUT',
          flags: { isRetriable: true },
        },
      ],
      'unknown',
    );
    assert.ok(by('retriable', 'recreate-producer') >= 1);
  });

  test('a commit that reached the broker but reported a timeout leaves no duplicate', async () => {
    await runWith(
      [
        {
          operation: 'commit-transaction',
          nth: 3,
          error: '_TIMED_OUT',
          flags: { isRetriable: true },
          after: true,
        },
      ],
      'lostreply',
    );
  });

  test('a fatal producer error (not a fence) is recovered by a new producer with the same transactional id', async () => {
    const { by } = await runWith(
      [{ operation: 'commit-transaction', nth: 2, error: '_FATAL', flags: { isFatal: true } }],
      'fatal',
    );
    assert.equal(by('fatal', 'recreate-producer'), 1);
  });

  test('a consumer stranded without brokers (librdkafka #5301) is replaced by the transport recovery', async () => {
    // A real fenced broker strands only the odd client (test/integration/kafka/stranded-clients);
    // here the first consumer reports it as the stranded-client watch would, while it holds work.
    let consumers = 0;
    const { by } = await runWith(
      [],
      'stranded',
      {
        ...defaultClients,
        consumer: (settings, listener, onError, log) => {
          consumers += 1;
          const c = defaultClients.consumer(settings, listener, onError, log);
          if (consumers === 1) setTimeout(() => onError(strandedError('client')), 1_500);
          return c;
        },
      },
      // The 600 records may all be through before the report comes 1.5 s after the first consumer.
      { holds: () => consumers >= 2, what: 'the stranded consumer replaced' },
    );
    assert.equal(by('transport', 'reconnect'), 1);
    assert.equal(consumers, 2, 'one replacement consumer');
  });
});
