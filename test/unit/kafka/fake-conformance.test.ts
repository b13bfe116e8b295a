import { silentLogger } from '../../../src/observability/logger.ts';
import type { ConsumerPort } from '../../../src/kafka/consumer.ts';
import type { ProducerPort } from '../../../src/kafka/producer.ts';
import { testConsumerSettings } from '../../helpers/consumer-settings.ts';
import { kafkaConformance, type ConformanceWorld } from '../../support/kafka-conformance.ts';
import { FakeKafka, FakeTopic } from '../../support/worker-fakes.ts';

// The fakes the step-by-step worker tests run on, held to the behaviour the real adapter shows in
// test/integration/kafka/adapter-conformance.test.ts.

const settings = {
  bootstrapServers: 'fake:9092',
  clientId: 'conformance',
  transactionTimeoutMs: 30_000,
  messageTimeoutMs: 20_000,
  apiTimeoutMs: 20_000,
};

let worlds = 0;

function fakeWorld(records: number): Promise<ConformanceWorld> {
  worlds += 1;
  const input = `in-${worlds}`;
  const output = `out-${worlds}`;
  const kafka = new FakeKafka(new FakeTopic(input, records), [output]);
  const clients = kafka.clients();
  const log = silentLogger();
  let ids = 0;
  const made: (ProducerPort | ConsumerPort)[] = [];
  return Promise.resolve({
    input,
    output,
    async producer(transactionalId) {
      const p = clients.producer({ ...settings, transactionalId }, log);
      made.push(p);
      await p.connect(10_000);
      await p.initTransactions();
      return p;
    },
    async consumer() {
      const c = clients.consumer(
        testConsumerSettings(settings.bootstrapServers, settings.clientId, `group-${worlds}`),
        { onAssign: () => undefined, onRevoke: () => undefined, onLost: () => undefined },
        () => undefined,
        log,
      );
      made.push(c);
      await c.connect(10_000);
      c.subscribe([input]);
      return c;
    },
    committedValues(last) {
      const values = kafka.producers
        .flatMap((p) => p.committedOutputs)
        .filter((r) => r.topic === output)
        .map((r) => String(r.value));
      if (!values.includes(last))
        return Promise.reject(new Error(`${last} was never committed: ${values.join(',')}`));
      return Promise.resolve(values.slice(0, values.indexOf(last) + 1));
    },
    groupPosition() {
      // The fake's group starts at offset 0 with nothing committed: 0 reads as "none".
      return Promise.resolve(kafka.topic.committed === 0 ? undefined : kafka.topic.committed);
    },
    transactionalId: () => `txn-${worlds}-${(ids += 1)}`,
    async close() {
      await Promise.all(made.map((c) => c.close(1_000)));
    },
  });
}

kafkaConformance({ name: 'fake clients', world: fakeWorld });
