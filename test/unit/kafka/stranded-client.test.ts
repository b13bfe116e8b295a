import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import {
  assignedWithoutFetcher,
  FETCH_START_DEADLINE_MS,
  isStrandedError,
  knowsNoBroker,
  strandedError,
  watchForStranding,
} from '../../../src/kafka/stranded-client.ts';
import { classifyKafkaError } from '../../../src/kafka/classify.ts';
import { code } from '../../../src/kafka/error-codes.ts';

// The shapes librdkafka's statistics report for a client's brokers (names and sources as seen).
const stats = (...brokers: [string, string, string][]) =>
  JSON.stringify({
    name: 'reader#consumer-1',
    brokers: Object.fromEntries(brokers.map(([name, source, state]) => [name, { name, source, state }])),
  });
const LEARNED_UP: [string, string, string] = ['127.0.0.1:29092/1', 'learned', 'UP'];
const LEARNED_DOWN: [string, string, string] = ['127.0.0.1:29092/1', 'learned', 'DOWN'];
const BOOTSTRAP: [string, string, string] = ['127.0.0.1:29092/bootstrap', 'configured', 'CONNECT'];
const COORDINATOR: [string, string, string] = ['GroupCoordinator', 'logical', 'INIT'];

test('a client that knows a broker, up or down, configured or learned, is not stranded', () => {
  assert.equal(knowsNoBroker(stats(LEARNED_UP, COORDINATOR)), false);
  assert.equal(knowsNoBroker(stats(LEARNED_DOWN)), false, 'Kafka being down is not stranding');
  assert.equal(knowsNoBroker(stats(BOOTSTRAP)), false, 'a client still bootstrapping');
});

test('a client left with only logical brokers (or none) is stranded; unreadable stats are not', () => {
  assert.equal(knowsNoBroker(stats(COORDINATOR)), true);
  assert.equal(knowsNoBroker(stats()), true);
  assert.equal(knowsNoBroker('{not json'), false);
});

test('the watch decides after two stranded reports in a row, once', () => {
  const client = new EventEmitter();
  let calls = 0;
  watchForStranding(client, () => (calls += 1));
  const report = (json: string) => client.emit('event.stats', { message: json });
  report(stats(COORDINATOR));
  report(stats(LEARNED_UP)); // a healthy report in between starts the count again
  report(stats(COORDINATOR));
  assert.equal(calls, 0);
  report(stats(COORDINATOR));
  assert.equal(calls, 1);
  report(stats(COORDINATOR));
  report(stats(COORDINATOR));
  assert.equal(calls, 1);
});

// A consumer's statistics with partitions of one topic: [partition, desired (assigned), fetch_state].
const consumerStats = (...partitions: [string, boolean, string][]) =>
  JSON.stringify({
    brokers: { b: { name: '127.0.0.1:29092/1', source: 'learned', state: 'UP' } },
    topics: {
      in: {
        partitions: Object.fromEntries(
          partitions.map(([p, desired, fetch_state]) => [p, { partition: Number(p), desired, fetch_state }]),
        ),
      },
    },
  });

test('assigned partitions without a fetcher are found; fetching, unassigned and internal ones are not', () => {
  assert.deepEqual(
    assignedWithoutFetcher(
      consumerStats(['0', true, 'none'], ['1', true, 'active'], ['2', false, 'none'], ['-1', false, 'none']),
    ),
    ['in/0'],
  );
  assert.deepEqual(assignedWithoutFetcher(consumerStats(['0', true, 'offset-query'])), []);
});

test('a partition assigned without a fetcher for the deadline strands a consumer; a late start does not', () => {
  let t = 0;
  const client = new EventEmitter();
  const reasons: string[] = [];
  watchForStranding(client, (r) => reasons.push(r), { consumer: true, now: () => t });
  const report = (json: string) => client.emit('event.stats', { message: json });
  report(consumerStats(['0', true, 'none'], ['1', true, 'none']));
  t = FETCH_START_DEADLINE_MS - 1;
  report(consumerStats(['0', true, 'active'], ['1', true, 'none']));
  assert.deepEqual(reasons, []);
  t = FETCH_START_DEADLINE_MS + 5_000;
  report(consumerStats(['0', true, 'none'], ['1', true, 'active'])); // 0 stopped again: a new wait
  assert.deepEqual(reasons, [], 'partition 0 only now waits again, partition 1 started');
  t += FETCH_START_DEADLINE_MS;
  report(consumerStats(['0', true, 'none'], ['1', true, 'active']));
  assert.deepEqual(reasons, ['fetch-never-started']);
});

test('a producer watch never looks at partitions', () => {
  let t = 0;
  const client = new EventEmitter();
  const reasons: string[] = [];
  watchForStranding(client, (r) => reasons.push(r), { now: () => t });
  client.emit('event.stats', { message: consumerStats(['0', true, 'none']) });
  t = 10 * FETCH_START_DEADLINE_MS;
  client.emit('event.stats', { message: consumerStats(['0', true, 'none']) });
  assert.deepEqual(reasons, []);
});

test('the stranded error is a transport error the runtime recognises, unlike librdkafka own one', () => {
  const err = strandedError('consume');
  assert.match(err.message, /librdkafka #5301/);
  assert.match(strandedError('consume', 'fetch-never-started').message, /librdkafka #5586/);
  assert.equal(err.kind, 'transport');
  assert.equal(err.codeName, '_ALL_BROKERS_DOWN');
  assert.equal(isStrandedError(err), true);
  assert.equal(isStrandedError(classifyKafkaError({ code: code('_ALL_BROKERS_DOWN') }, 'client')), false);
});
