import assert from 'node:assert/strict';
import { test } from 'node:test';
import { binRequests, binWidthMicros, responseSize } from '../../../src/stages/inspector/binning.ts';

const MS = 1000;

test('bin width: time_range units of time_type in microseconds', () => {
  assert.equal(binWidthMicros('ms', 20), 20_000);
  assert.equal(binWidthMicros('s', 2), 2_000_000);
  assert.equal(binWidthMicros('us', 5), 5);
  assert.equal(binWidthMicros('ns', 500), 0.5);
  assert.equal(binWidthMicros('D', 1), 86_400_000_000);
});

test('counts are summed per bin (not overwritten), empty bins are zeros, sizes are averaged', () => {
  const series = binRequests([0, 5 * MS, 19.999 * MS, 20 * MS, 65 * MS], [10, 20, 30, 40, 50], 20 * MS, 1000);
  assert.deepEqual(series, { start: 0, width: 20 * MS, counts: [3, 1, 0, 1], meanSizes: [20, 40, 0, 50] });
});

test('bins align to multiples of the width since the epoch', () => {
  const series = binRequests([1_000_050 * MS, 1_000_061 * MS], [0, 0], 20 * MS, 1000);
  assert.equal(series?.start, 1_000_040 * MS);
  assert.deepEqual(series?.counts, [1, 1]);
});

test('times before `from` are left out and the quiet gap since `from` becomes zero bins', () => {
  const series = binRequests([10 * MS, 20 * MS, 65 * MS], [0, 0, 0], 20 * MS, 1000, 0);
  assert.deepEqual(series?.counts, [1, 1, 0, 1]);
  const after = binRequests([10 * MS, 20 * MS, 65 * MS], [0, 0, 0], 20 * MS, 1000, 20 * MS);
  assert.deepEqual([after?.start, after?.counts], [20 * MS, [1, 0, 1]]);
  assert.equal(binRequests([10 * MS], [0], 20 * MS, 1000, 20 * MS), undefined);
});

test('a gap longer than maxBins is shortened; times spanning more than maxBins widen the bins', () => {
  const gap = binRequests([100 * MS], [0], 20 * MS, 3, 0);
  assert.deepEqual([gap?.start, gap?.counts], [60 * MS, [0, 0, 1]]);
  const wide = binRequests([0, 100 * MS], [0, 0], 20 * MS, 3);
  assert.deepEqual([wide?.width, wide?.counts], [40 * MS, [1, 0, 1]]);
});

test('response sizes such as 331b read as numbers; anything else as 0', () => {
  assert.equal(responseSize('331b'), 331);
  assert.equal(responseSize('331'), 331);
  assert.equal(responseSize(12), 12);
  assert.equal(responseSize('b'), 0);
  assert.equal(responseSize(undefined), 0);
});
