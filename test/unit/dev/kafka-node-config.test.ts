import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  bootstrapServersOf,
  generateClusterId,
  kafkaNodeAddresses,
  namespaceBootstrapOf,
  renderLog4j2Config,
  renderServerProperties,
  serverSettings,
} from '../../../src/dev/kafka-node-config.ts';

function parseProperties(text: string): Map<string, string> {
  const entries = text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const);
  return new Map(entries);
}

describe('kafka port layout', () => {
  test('node i listens on basePort + (i-1)*10 and the controller one above', () => {
    assert.deepEqual(kafkaNodeAddresses(3, 29092), [
      { id: 1, brokerPort: 29092, controllerPort: 29093 },
      { id: 2, brokerPort: 29102, controllerPort: 29103 },
      { id: 3, brokerPort: 29112, controllerPort: 29113 },
    ]);
  });

  test('bootstrap servers list every broker on 127.0.0.1', () => {
    assert.equal(
      bootstrapServersOf(kafkaNodeAddresses(3, 9092)),
      '127.0.0.1:9092,127.0.0.1:9102,127.0.0.1:9112',
    );
  });

  test('a namespace listener adds NAMESPACE on the host address at brokerPort + 2, advertised as such', () => {
    const cluster = kafkaNodeAddresses(3, 29092);
    const s = serverSettings({
      node: cluster[1]!,
      cluster,
      logDir: '/tmp/x',
      namespaceListenerHost: '10.213.0.1',
    });
    assert.equal(
      s.listeners,
      'PLAINTEXT://127.0.0.1:29102,CONTROLLER://127.0.0.1:29103,NAMESPACE://10.213.0.1:29104',
    );
    assert.equal(s['advertised.listeners'], 'PLAINTEXT://127.0.0.1:29102,NAMESPACE://10.213.0.1:29104');
    assert.equal(
      s['listener.security.protocol.map'],
      'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,NAMESPACE:PLAINTEXT',
    );
    assert.equal(s['inter.broker.listener.name'], 'PLAINTEXT');
    assert.equal(
      namespaceBootstrapOf(cluster, '10.213.0.1'),
      '10.213.0.1:29094,10.213.0.1:29104,10.213.0.1:29114',
    );
    const plain = serverSettings({ node: cluster[0]!, cluster, logDir: '/tmp/x' });
    assert.ok(!plain.listeners!.includes('NAMESPACE'));
  });

  test('rejects privileged, fractional and overflowing base ports', () => {
    for (const port of [80, 9092.5, 65530])
      assert.throws(() => kafkaNodeAddresses(3, port), /invalid Kafka base port/);
  });
});

describe('server.properties', () => {
  const single = kafkaNodeAddresses(1, 19092);
  const triple = kafkaNodeAddresses(3, 29092);

  test('a single node replicates internal topics once so transactions and groups work', () => {
    const props = parseProperties(
      renderServerProperties({ node: single[0]!, cluster: single, logDir: '/d' }),
    );
    for (const key of [
      'default.replication.factor',
      'min.insync.replicas',
      'offsets.topic.replication.factor',
      'transaction.state.log.replication.factor',
      'transaction.state.log.min.isr',
      'share.coordinator.state.topic.replication.factor',
      'share.coordinator.state.topic.min.isr',
    ]) {
      assert.equal(props.get(key), '1', key);
    }
    assert.equal(props.get('controller.quorum.voters'), '1@127.0.0.1:19093');
    assert.equal(props.get('listeners'), 'PLAINTEXT://127.0.0.1:19092,CONTROLLER://127.0.0.1:19093');
    assert.equal(props.get('advertised.listeners'), 'PLAINTEXT://127.0.0.1:19092');
    assert.equal(props.get('log.dirs'), '/d');
  });

  test('three nodes replicate three times with min ISR 2 and share one voter list', () => {
    const second = parseProperties(
      renderServerProperties({ node: triple[1]!, cluster: triple, logDir: '/d2' }),
    );
    assert.equal(second.get('node.id'), '2');
    assert.equal(
      second.get('controller.quorum.voters'),
      '1@127.0.0.1:29093,2@127.0.0.1:29103,3@127.0.0.1:29113',
    );
    assert.equal(second.get('default.replication.factor'), '3');
    assert.equal(second.get('offsets.topic.replication.factor'), '3');
    assert.equal(second.get('transaction.state.log.replication.factor'), '3');
    assert.equal(second.get('min.insync.replicas'), '2');
    assert.equal(second.get('transaction.state.log.min.isr'), '2');
  });

  test('test-friendly defaults: no auto-created topics, short group sessions, 3 partitions', () => {
    const props = serverSettings({ node: single[0]!, cluster: single, logDir: '/d' });
    assert.equal(props['auto.create.topics.enable'], 'false');
    assert.equal(props['num.partitions'], '3');
    assert.equal(props['group.initial.rebalance.delay.ms'], '0');
    assert.equal(props['group.consumer.min.session.timeout.ms'], '6000');
    assert.equal(props['group.min.session.timeout.ms'], '6000');
  });

  test('overrides win over generated settings and appear once', () => {
    const text = renderServerProperties({
      node: single[0]!,
      cluster: single,
      logDir: '/d',
      overrides: { 'num.partitions': '7', 'log.retention.ms': '1000' },
    });
    assert.equal(text.match(/^num\.partitions=/gm)?.length, 1);
    const props = parseProperties(text);
    assert.equal(props.get('num.partitions'), '7');
    assert.equal(props.get('log.retention.ms'), '1000');
  });
});

describe('log4j2 config', () => {
  test('writes to the given file, XML-escaped', () => {
    const xml = renderLog4j2Config('/data/a&b/server.log');
    assert.match(xml, /fileName="\/data\/a&amp;b\/server\.log"/);
  });
});

describe('cluster id', () => {
  test('is 16 bytes in base64url (22 characters)', () => {
    assert.match(generateClusterId(), /^[A-Za-z0-9_-]{22}$/);
  });

  test('never starts with "-", which StorageTool would parse as an option', () => {
    const draws = [Buffer.alloc(16, 0xfb), Buffer.alloc(16, 1)];
    assert.equal(
      generateClusterId(() => draws.shift()!),
      Buffer.alloc(16, 1).toString('base64url'),
    );
  });
});
