import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { systemClock } from '../../../src/runtime/clock.ts';

describe('systemClock', () => {
  it('sleeps about the given time', async () => {
    const t0 = performance.now();
    await systemClock.sleep(30);
    assert.ok(performance.now() - t0 >= 25);
  });

  it('wakes at once when the signal aborts, so a stopping worker does not wait out its back-off', async () => {
    const controller = new AbortController();
    const t0 = performance.now();
    setTimeout(() => controller.abort(), 20);
    await systemClock.sleep(60_000, controller.signal);
    assert.ok(performance.now() - t0 < 5_000);
  });

  it('does not sleep when the signal is already aborted', async () => {
    const t0 = performance.now();
    await systemClock.sleep(60_000, AbortSignal.abort());
    assert.ok(performance.now() - t0 < 1_000);
  });
});
