import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AdminPort } from '../../../src/kafka/admin.ts';
import { syntheticKafkaError } from '../../../src/kafka/classify.ts';
import { ensureMonitoringTopics, monitoringTopics } from '../../../src/monitoring/topics.ts';

/** An admin whose createTopics fails with each of `errors` in turn, then succeeds. */
function flakyAdmin(errors: Error[]): AdminPort & { calls: number; closed: boolean } {
  const admin = {
    calls: 0,
    closed: false,
    createTopics(): Promise<void> {
      const e = errors[admin.calls];
      admin.calls += 1;
      return e === undefined ? Promise.resolve() : Promise.reject(e);
    },
    close(): void {
      admin.closed = true;
    },
  };
  return admin as unknown as AdminPort & { calls: number; closed: boolean };
}

test('the monitoring topics wait out a broker outage (the agent must not exit on one) and say so each time', async () => {
  const down = [
    syntheticKafkaError('_TRANSPORT', 'admin'),
    syntheticKafkaError('_TIMED_OUT', 'admin'),
    syntheticKafkaError('_TRANSPORT', 'admin'),
  ];
  const admin = flakyAdmin(down);
  const waits: number[] = [];
  const topics = await ensureMonitoringTopics('127.0.0.1:1', {
    admin,
    firstWaitMs: 5,
    onWait: (err, ms) => {
      assert.ok(err.kind === 'transport' || err.kind === 'retriable', err.kind);
      waits.push(ms);
    },
  });
  assert.deepEqual(topics, monitoringTopics());
  assert.equal(admin.calls, 4);
  assert.deepEqual(waits, [5, 10, 20]);
  assert.ok(admin.closed);
});

test('an error no wait can fix (not authorized) is thrown at once, and SIGTERM ends the waiting', async () => {
  const denied = flakyAdmin([syntheticKafkaError('TOPIC_AUTHORIZATION_FAILED', 'admin')]);
  await assert.rejects(
    ensureMonitoringTopics('x:1', { admin: denied, firstWaitMs: 5 }),
    /TOPIC_AUTHORIZATION/,
  );
  assert.equal(denied.calls, 1);
  const stop = new AbortController();
  const forever = flakyAdmin(Array.from({ length: 1000 }, () => syntheticKafkaError('_TRANSPORT', 'admin')));
  const pending = ensureMonitoringTopics('x:1', {
    admin: forever,
    firstWaitMs: 5,
    signal: stop.signal,
    onWait: () => {
      if (forever.calls === 3) stop.abort();
    },
  });
  await assert.rejects(pending, /_TRANSPORT|transport/i);
  assert.equal(forever.calls, 4);
  assert.ok(forever.closed);
});
