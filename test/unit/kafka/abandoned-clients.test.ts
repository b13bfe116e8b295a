import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stuckCallsExhaustPool, threadPoolSize } from '../../../src/kafka/abandoned-clients.ts';

describe('stuck native calls and the libuv pool', () => {
  it('reads UV_THREADPOOL_SIZE, with libuv’s default 4 when unset or invalid', () => {
    assert.equal(threadPoolSize({ UV_THREADPOOL_SIZE: '16' }), 16);
    assert.equal(threadPoolSize({}), 4);
    assert.equal(threadPoolSize({ UV_THREADPOOL_SIZE: 'many' }), 4);
    assert.equal(threadPoolSize({ UV_THREADPOOL_SIZE: '0' }), 4);
  });

  it('calls the pool exhausted once stuck calls hold half of it', () => {
    assert.equal(stuckCallsExhaustPool(0, 16), false);
    assert.equal(stuckCallsExhaustPool(7, 16), false);
    assert.equal(stuckCallsExhaustPool(8, 16), true);
    assert.equal(stuckCallsExhaustPool(1, 1), true);
    assert.equal(stuckCallsExhaustPool(2, 4), true);
  });
});
