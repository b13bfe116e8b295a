import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exponentialBackOff, fixedBackOff } from '../../../src/runtime/backoff.ts';

describe('fixedBackOff', () => {
  it('waits the same interval until the attempts are used up', () => {
    const b = fixedBackOff(250, 3);
    assert.deepEqual(
      [1, 2, 3, 4].map((a) => b(a, 0)),
      [250, 250, 250, undefined],
    );
  });

  it('retries forever without a maximum', () => {
    assert.equal(fixedBackOff(100)(1_000_000, 1e12), 100);
  });
});

describe('exponentialBackOff', () => {
  it('grows by the multiplier from the initial interval', () => {
    const b = exponentialBackOff({ initialMs: 100, multiplier: 2, maxIntervalMs: 60_000 });
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((a) => b(a, 0)),
      [100, 200, 400, 800, 1600],
    );
  });

  it('caps each delay at maxIntervalMs', () => {
    const b = exponentialBackOff({ initialMs: 250, multiplier: 2, maxIntervalMs: 1_000 });
    assert.deepEqual(
      [1, 2, 3, 4, 10, 100].map((a) => b(a, 0)),
      [250, 500, 1_000, 1_000, 1_000, 1_000],
    );
  });

  it('gives up once maxElapsedMs has passed since the first failure', () => {
    const b = exponentialBackOff({
      initialMs: 100,
      multiplier: 2,
      maxIntervalMs: 1_000,
      maxElapsedMs: 5_000,
    });
    assert.equal(b(3, 4_999), 400);
    assert.equal(b(3, 5_000), undefined);
  });

  it('gives up after maxAttempts', () => {
    const b = exponentialBackOff({ initialMs: 100, multiplier: 2, maxIntervalMs: 1_000, maxAttempts: 2 });
    assert.deepEqual(
      [1, 2, 3].map((a) => b(a, 0)),
      [100, 200, undefined],
    );
  });

  it('draws a jittered delay from [d * (1 - jitter), d]', () => {
    const at = (random: number) =>
      exponentialBackOff({
        initialMs: 1_000,
        multiplier: 2,
        maxIntervalMs: 10_000,
        jitter: 0.2,
        random: () => random,
      })(2, 0);
    assert.equal(at(0), 2_000);
    assert.equal(at(0.5), 1_800);
    assert.equal(at(0.999999), 1_600);
    for (let i = 0; i < 200; i += 1) {
      const d = exponentialBackOff({ initialMs: 1_000, multiplier: 2, maxIntervalMs: 10_000, jitter: 0.2 })(
        2,
        0,
      )!;
      assert.ok(d >= 1_600 && d <= 2_000, String(d));
    }
  });
});
