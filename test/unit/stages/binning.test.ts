import assert from 'node:assert/strict';
import { test } from 'node:test';
import { binWidthMicros, responseSize } from '../../../src/stages/inspector/binning.ts';

test('bin width: time_range units of time_type in microseconds', () => {
  assert.equal(binWidthMicros('ms', 20), 20_000);
  assert.equal(binWidthMicros('s', 2), 2_000_000);
  assert.equal(binWidthMicros('us', 5), 5);
  assert.equal(binWidthMicros('ns', 500), 0.5);
  assert.equal(binWidthMicros('D', 1), 86_400_000_000);
});

test('response sizes such as 331b read as numbers; anything else as 0', () => {
  assert.equal(responseSize('331b'), 331);
  assert.equal(responseSize('331'), 331);
  assert.equal(responseSize(12), 12);
  assert.equal(responseSize('b'), 0);
  assert.equal(responseSize(undefined), 0);
});
