import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  consumerProperties,
  producerProperties,
  type ConsumerSettings,
  type ProducerSettings,
} from '../../../src/kafka/client-config.ts';

const consumer: ConsumerSettings = {
  bootstrapServers: '127.0.0.1:9092',
  clientId: 'detector-0-consumer-1',
  groupId: 'data_analysis.detector',
  groupProtocol: 'classic',
  assignmentStrategy: 'cooperative-sticky',
  sessionTimeoutMs: 45_000,
  heartbeatIntervalMs: 3_000,
  maxPollIntervalMs: 300_000,
  isolation: 'read_committed',
  autoOffsetReset: 'earliest',
};

const producer: ProducerSettings = {
  bootstrapServers: '127.0.0.1:9092',
  clientId: 'detector-0-producer',
  transactionalId: 'data_analysis.detector-0',
  transactionTimeoutMs: 60_000,
  messageTimeoutMs: 30_000,
  apiTimeoutMs: 10_000,
};

describe('metadata refresh', () => {
  it('refreshes metadata every 5 s by default in both clients, so new partitions are seen in seconds', () => {
    assert.equal(consumerProperties(consumer)['topic.metadata.refresh.interval.ms'], 5_000);
    assert.equal(producerProperties(producer)['topic.metadata.refresh.interval.ms'], 5_000);
  });

  it('takes the configured interval', () => {
    const p = consumerProperties({ ...consumer, metadataRefreshIntervalMs: 1_500 });
    assert.equal(p['topic.metadata.refresh.interval.ms'], 1_500);
    const q = producerProperties({ ...producer, metadataRefreshIntervalMs: 1_500 });
    assert.equal(q['topic.metadata.refresh.interval.ms'], 1_500);
  });
});

describe('consumerProperties', () => {
  it('never commits offsets by itself: only the transaction (or an explicit commit) does', () => {
    const p = consumerProperties(consumer);
    assert.equal(p['enable.auto.commit'], false);
    assert.equal(p['enable.auto.offset.store'], false);
    assert.equal(p['isolation.level'], 'read_committed');
    assert.equal(p['max.poll.interval.ms'], 300_000);
  });

  it('sets session, heartbeat and assignor only for the classic protocol', () => {
    const classic = consumerProperties(consumer);
    assert.equal(classic['partition.assignment.strategy'], 'cooperative-sticky');
    assert.equal(classic['session.timeout.ms'], 45_000);
    const kip848 = consumerProperties({ ...consumer, groupProtocol: 'consumer' });
    assert.equal(kip848['group.protocol'], 'consumer');
    for (const k of ['partition.assignment.strategy', 'session.timeout.ms', 'heartbeat.interval.ms'])
      assert.equal(k in kip848, false, k);
  });

  it('lets overrides have the last word', () => {
    const p = consumerProperties({
      ...consumer,
      overrides: { 'isolation.level': 'read_uncommitted', debug: 'cgrp' },
    });
    assert.equal(p['isolation.level'], 'read_uncommitted');
    assert.equal(p.debug, 'cgrp');
  });
});

describe('producerProperties', () => {
  it('is idempotent with acks=all and a transactional id and timeout when transactional', () => {
    const p = producerProperties(producer);
    assert.equal(p['enable.idempotence'], true);
    assert.equal(p.acks, 'all');
    assert.equal(p['transactional.id'], 'data_analysis.detector-0');
    assert.equal(p['transaction.timeout.ms'], 60_000);
    assert.equal(p['message.timeout.ms'], 30_000);
  });

  it('has no transactional settings for the at-least-once producer', () => {
    const { transactionalId: _omit, ...plain } = producer;
    const p = producerProperties(plain);
    assert.equal('transactional.id' in p, false);
    assert.equal('transaction.timeout.ms' in p, false);
    assert.equal(p['enable.idempotence'], true);
  });
});
