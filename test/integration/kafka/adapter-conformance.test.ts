import { before } from 'node:test';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { createConsumer, type ConsumerPort } from '../../../src/kafka/consumer.ts';
import { createProducer, type ProducerPort } from '../../../src/kafka/producer.ts';
import { createReadCommittedReader } from '../../../src/kafka/read-committed-reader.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { testConsumerSettings } from '../../helpers/consumer-settings.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { uniqueGroup, uniqueTopic, uniqueTransactionalId } from '../../helpers/names.ts';
import { kafkaConformance, type ConformanceWorld } from '../../support/kafka-conformance.ts';
import { createTopics, seed } from '../../support/pipeline-harness.ts';

// The real adapter of src/kafka/ on the run's broker, doing what the fakes of the step-by-step
// worker tests must do too (test/unit/kafka/fake-conformance.test.ts runs the same bodies on them).

let bootstrap: string;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
});

async function realWorld(records: number): Promise<ConformanceWorld> {
  const input = uniqueTopic('conf-in');
  const output = uniqueTopic('conf-out');
  const group = uniqueGroup('conf');
  await createTopics(bootstrap, [input, output], 1);
  if (records > 0) await seed(bootstrap, input, 0, records);
  const log = silentLogger();
  const made: (ProducerPort | ConsumerPort)[] = [];
  return {
    input,
    output,
    async producer(transactionalId) {
      const p = createProducer(
        {
          bootstrapServers: bootstrap,
          clientId: 'conformance-producer',
          transactionalId,
          transactionTimeoutMs: 30_000,
          messageTimeoutMs: 20_000,
          apiTimeoutMs: 20_000,
        },
        log,
      );
      made.push(p);
      await p.connect(20_000);
      await p.initTransactions();
      return p;
    },
    async consumer() {
      const c = createConsumer(
        testConsumerSettings(bootstrap, 'conformance-consumer', group),
        { onAssign: () => undefined, onRevoke: () => undefined, onLost: () => undefined },
        () => undefined,
        log,
      );
      made.push(c);
      await c.connect(20_000);
      c.subscribe([input]);
      return c;
    },
    async committedValues(last) {
      const reader = createReadCommittedReader({ bootstrap, clientId: 'conformance-check' });
      await reader.connect(20_000);
      reader.subscribe([output]);
      const values: string[] = [];
      const deadline = Date.now() + 30_000;
      try {
        while (!values.includes(last)) {
          if (Date.now() > deadline)
            throw new Error(`${last} not read within 30 s; read ${values.join(',')}`);
          for (const r of await reader.consume(100, 500)) values.push(String(r.value));
        }
      } finally {
        await reader.close(10_000);
      }
      return values.slice(0, values.indexOf(last) + 1);
    },
    async groupPosition() {
      const admin = createAdmin(bootstrap);
      try {
        const [position] = await admin.groupOffsets(group, [input]);
        return position === undefined || position.offset < 0 ? undefined : position.offset;
      } finally {
        admin.close();
      }
    },
    transactionalId: () => uniqueTransactionalId('conf'),
    async close() {
      await Promise.allSettled(made.map((c) => c.close(10_000)));
    },
  };
}

kafkaConformance({ name: 'src/kafka adapter, real broker', world: realWorld });
