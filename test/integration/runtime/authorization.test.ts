import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { LocalKafkaCluster } from '../../../src/dev/kafka-cluster.ts';
import { requireKafkaDistribution } from '../../../src/dev/kafka-distribution.ts';
import { findJava } from '../../../src/dev/executables.ts';
import { defaultVarDir } from '../../../src/dev/paths.ts';
import { TransactionalWorker } from '../../../src/runtime/index.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { uniqueGroup, uniqueTopic } from '../../helpers/names.ts';
import { createTopics, passThroughStage, seed, testKafkaOptions } from '../../support/pipeline-harness.ts';

/**
 * A broker of its own with the ACL authorizer: everything is allowed unless an ACL says otherwise
 * (allow.everyone.if.no.acl.found), so only the resources the tests deny are refused. Its ports sit
 * 40 above the shared test broker's, so each engineer's pair stays together.
 */
const BASE_PORT = Number(process.env.HAMSTRING_TEST_KAFKA_PORT ?? 21092) + 40;
const DENIED = 'acl-denied-';

let cluster: LocalKafkaCluster;
let bootstrap: string;

async function acl(
  resource: 'TOPIC' | 'GROUP',
  prefix: string,
  operation: string,
  permission: 'ALLOW' | 'DENY',
): Promise<void> {
  const { libsDir } = requireKafkaDistribution();
  const source = fileURLToPath(new URL('../../support/acl/AddAcl.java', import.meta.url));
  await promisify(execFile)(
    findJava(),
    ['-cp', join(libsDir, '*'), source, bootstrap, resource, prefix, operation, permission],
    {
      timeout: 60_000,
    },
  );
}

before(async () => {
  cluster = await LocalKafkaCluster.start({
    nodes: 1,
    dataDir: defaultVarDir(`test-kafka-acl-${BASE_PORT}`),
    basePort: BASE_PORT,
    heapMb: 384,
    brokerOverrides: {
      'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
      'allow.everyone.if.no.acl.found': 'true',
    },
  });
  bootstrap = cluster.bootstrapServers;
  await acl('GROUP', `${DENIED}group-`, 'ALL', 'DENY');
});

after(async () => {
  await cluster?.stop();
});

async function runDenied(input: string, group: string, beforeStart = async () => {}) {
  const output = uniqueTopic(`${DENIED}out`);
  await createTopics(bootstrap, [input, output], 1);
  await seed(bootstrap, input, 0, 10);
  await beforeStart();
  const w = new TransactionalWorker({
    stage: passThroughStage(input, output, group),
    instanceId: '0',
    mode: 'exactly-once',
    kafka: testKafkaOptions(bootstrap, { groupId: group, apiTimeoutMs: 5_000 }),
    batch: { size: 10, timeoutMs: 50 },
    log: silentLogger(),
  });
  await w.start();
  const done = w.done();
  const stopped = await Promise.race([
    done.then(() => true),
    new Promise((r) => setTimeout(() => r(false), 30_000)),
  ]);
  if (!stopped) await w.stop();
  return { w, stopped };
}

describe('authorization errors at start (broker with the ACL authorizer)', () => {
  test('a group the principal may not use stops the worker with a reason naming the authorization failure', async () => {
    const { w, stopped } = await runDenied(uniqueTopic('acl-ok-in'), uniqueGroup(`${DENIED}group`));
    const s = w.status();
    assert.ok(stopped, `the worker stopped by itself: ${JSON.stringify(s)}`);
    assert.equal(s.state, 'failed');
    assert.equal(s.live, false);
    assert.match(s.failure ?? '', /^not authorized: GROUP_AUTHORIZATION_FAILED/);
    assert.equal((await w.metrics.reconnectAttempts.get()).values[0]?.value ?? 0, 0);
  });

  test('an input topic the principal may not read stops the worker with a reason naming the authorization failure', async () => {
    const input = uniqueTopic(`${DENIED}topic-in`);
    const { w, stopped } = await runDenied(input, uniqueGroup('acl-ok'), async () => {
      // Any ACL on a topic ends allow-if-no-ACL for it: describing and writing are allowed again.
      await acl('TOPIC', input, 'DESCRIBE', 'ALLOW');
      await acl('TOPIC', input, 'READ', 'DENY');
    });
    const s = w.status();
    assert.ok(stopped, `the worker stopped by itself: ${JSON.stringify(s)}`);
    assert.equal(s.state, 'failed');
    assert.equal(s.live, false);
    assert.match(s.failure ?? '', /^not authorized: TOPIC_AUTHORIZATION_FAILED/);
  });
});
