import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createAdmin, type AdminPort } from '../../../src/kafka/admin.ts';
import { prepareOutputTopics, type TopicPlan } from '../../../src/runtime/topic-setup.ts';
import { uniqueTopic } from '../../helpers/names.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { createTopics } from '../../support/pipeline-harness.ts';

let bootstrap: string;
let admin: AdminPort;
before(async () => {
  bootstrap = (await testKafka()).bootstrap;
  admin = createAdmin(bootstrap);
});
after(() => admin.close());

const plan = (over: Partial<TopicPlan>): TopicPlan => ({
  stage: 'test.stage',
  inputs: [],
  outputs: [],
  create: true,
  replicationFactor: -1,
  bootstrapServers: bootstrap,
  ...over,
});

describe('output and dead-letter topics are there before the first transaction (real 1-node broker)', () => {
  test('a missing declared output topic is a configuration error naming it', async () => {
    const [input, present, missing] = [uniqueTopic('in'), uniqueTopic('out'), uniqueTopic('out-typo')];
    await createTopics(bootstrap, [input, present], 1);
    const error = await prepareOutputTopics(admin, plan({ inputs: [input], outputs: [present, missing] }));
    assert.match(
      error ?? '',
      new RegExp(`configuration error: output topic\\(s\\) ${missing} of stage test.stage do not exist`),
    );
    assert.doesNotMatch(error ?? '', new RegExp(`${present}[ ,]`));
  });

  test("a missing dead-letter topic is created with its input's partition count", async () => {
    const [a, b, out] = [uniqueTopic('in-a'), uniqueTopic('in-b'), uniqueTopic('out')];
    await createTopics(bootstrap, [a, out], 3);
    await createTopics(bootstrap, [b], 5);
    const error = await prepareOutputTopics(
      admin,
      plan({ inputs: [a, b], outputs: [out], deadLetterTopic: (t) => `${t}.DLT` }),
    );
    assert.equal(error, undefined);
    const dlts = [`${a}.DLT`, `${b}.DLT`];
    let counts = new Map<string, number>();
    await waitFor(async () => (counts = await admin.partitionCounts(dlts)).size === 2, {
      timeoutMs: 10_000,
      message: 'both dead-letter topics in the metadata',
    });
    assert.deepEqual(Object.fromEntries(counts), { [`${a}.DLT`]: 3, [`${b}.DLT`]: 5 });
  });

  test('when the runtime may not create topics, a missing dead-letter topic is a configuration error naming it', async () => {
    const input = uniqueTopic('in');
    await createTopics(bootstrap, [input], 1);
    const error = await prepareOutputTopics(
      admin,
      plan({ inputs: [input], deadLetterTopic: () => `${input}-dead`, create: false }),
    );
    assert.match(
      error ?? '',
      new RegExp(`dead-letter topic\\(s\\) ${input}-dead of stage test.stage do not exist`),
    );
    assert.equal((await admin.listTopics()).includes(`${input}-dead`), false);
  });
});
