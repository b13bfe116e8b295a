import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isReady, notReadyReason, type ReadinessFacts } from '../../../src/runtime/readiness-reason.ts';

const running: ReadinessFacts = { state: 'running', hasConsumer: true, assigned: 3, unowned: [] };
const since = Date.UTC(2026, 0, 1, 7, 0, 0);

describe('notReadyReason', () => {
  it('says nothing for a running worker that holds partitions', () => {
    assert.equal(notReadyReason(running), undefined);
  });

  it('names the failure of a failed worker', () => {
    assert.equal(notReadyReason({ ...running, state: 'failed', failure: 'fenced' }), 'failed: fenced');
  });

  it('names the address, since when and the cause while the worker reconnects', () => {
    const reason = notReadyReason({
      ...running,
      state: 'recovering',
      hasConsumer: false,
      reconnecting: { since, attempt: 4, lastError: '_ALL_BROKERS_DOWN' },
      connection: {
        address: 'kafka-typo:9092',
        since,
        code: '_RESOLVE',
        reason: "Failed to resolve 'kafka-typo:9092'",
      },
    });
    assert.equal(
      reason,
      "reconnecting since 2026-01-01T07:00:00.000Z (attempt 4; last error _ALL_BROKERS_DOWN): kafka-typo:9092 unreachable since 2026-01-01T07:00:00.000Z (_RESOLVE: Failed to resolve 'kafka-typo:9092')",
    );
  });

  it('names a connection problem the clients see before any reconnect loop', () => {
    const reason = notReadyReason({
      ...running,
      state: 'starting',
      connection: { address: '127.0.0.1:1', since, code: '_TRANSPORT', reason: 'Connection refused' },
    });
    assert.match(
      reason ?? '',
      /^starting, connecting: 127\.0\.0\.1:1 unreachable since .* \(_TRANSPORT: Connection refused\)$/,
    );
  });

  it('is not ready while its clients have lost every broker, ready again when one is up', () => {
    const problem = { address: '127.0.0.1:1', since, code: '_TRANSPORT', reason: 'Connection refused' };
    assert.equal(isReady(running), true);
    assert.equal(isReady({ ...running, connection: { ...problem, allBrokersDown: false } }), true);
    const down = { ...running, connection: { ...problem, allBrokersDown: true } };
    assert.equal(isReady(down), false);
    assert.match(notReadyReason(down) ?? '', /^all brokers down: 127\.0\.0\.1:1 unreachable since /);
  });

  it('says the worker waits for an assignment, with partitions nobody owns', () => {
    assert.equal(
      notReadyReason({ ...running, assigned: 0, unowned: ['in:3'] }),
      'no partitions assigned (the group has not assigned any to this member; unowned for too long: in:3)',
    );
  });
});
