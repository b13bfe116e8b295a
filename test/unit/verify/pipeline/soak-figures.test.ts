import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { InjectedFault } from '../../../../src/verify/pipeline/faults.ts';
import { niceMax, timeSeriesSvg } from '../../../../src/verify/pipeline/soak-chart.ts';
import { quantile, slope, soakFigures } from '../../../../src/verify/pipeline/soak-figures.ts';
import type { Sample } from '../../../../src/verify/pipeline/soak-sampler.ts';
import { soakSchedule } from '../../../../src/verify/pipeline/soak.ts';

const STAGES = ['logserver', 'collector dga_collector', 'detector dga_detector'];

/** A sample every 10 s: the collector's RSS as given, the detector's lag as given. */
function samples(rss: (s: number) => number, lag: (s: number) => number, seconds: number): Sample[] {
  return Array.from({ length: seconds / 10 + 1 }, (_, i) => ({
    atMs: i * 10_000,
    processes: [{ label: 'collector dga_collector', rssMiB: rss(i * 10), cpuPercent: 50 }],
    lags: [{ label: 'detector dga_detector', lag: lag(i * 10) }],
  }));
}

const fault = (kind: InjectedFault['kind'], atS: number, lastedS: number): InjectedFault => ({
  kind,
  target: 'detector dga_detector',
  atMs: atS * 1000,
  atActualMs: atS * 1000,
  injectedAt: atS * 1000,
  restoredAt: (atS + lastedS) * 1000,
});

describe('soak figures', () => {
  test('the memory slope after warm-up: flat memory is 0 MiB/h, 1 MiB per minute is 60 MiB/h', () => {
    const flat = soakFigures(
      samples(
        () => 200,
        () => 0,
        600,
      ),
      [],
      [],
    );
    assert.equal(flat.memory[0]?.slopeMiBPerHour, 0);
    const growing = soakFigures(
      samples(
        (s) => 200 + s / 60,
        () => 0,
        600,
      ),
      [],
      [],
    );
    assert.ok(Math.abs((growing.memory[0]?.slopeMiBPerHour ?? 0) - 60) < 1e-6);
    assert.equal(growing.memory[0]?.peakMiB, 210);
  });

  test('a fault: its peak lag, and when the lag was back at its level before', () => {
    // Lag 10 before, 5,000 while stopped from 100 s to 120 s, back to 10 at 150 s.
    const lag = (s: number) => (s < 100 ? 10 : s < 150 ? 5_000 : 10);
    const f = soakFigures(
      samples(() => 100, lag, 300),
      [fault('stage-sigstop', 100, 20), fault('stage-kill-9', 250, 1)],
      [
        { atMs: 130_000, detector: 'dga', latencyMs: 9_000 },
        { atMs: 140_000, detector: 'dga', latencyMs: 3_000 },
        { atMs: 260_000, detector: 'dga', latencyMs: 1_000 },
      ],
    );
    const [stop, kill] = f.faults;
    assert.equal(stop?.peakLag, 5_000);
    assert.equal(stop?.recoveredAfterSeconds, 30);
    assert.equal(stop?.alerts, 2);
    assert.equal(stop?.alertP99Ms, 9_000);
    assert.equal(kill?.alerts, 1);
    // The first sample after the fault's end (251 s) is at 260 s.
    assert.equal(kill?.recoveredAfterSeconds, 9);
  });

  test('a lag never back has no recovery time', () => {
    const f = soakFigures(
      samples(
        () => 100,
        (s) => (s < 100 ? 0 : 10_000),
        300,
      ),
      [fault('broker-kill-9', 100, 10), fault('stage-kill-9', 250, 1)],
      [],
    );
    assert.equal(f.faults[0]?.recoveredAfterSeconds, undefined);
  });

  test('quantile and slope', () => {
    assert.equal(quantile([5, 1, 3, 2, 4], 0.5), 3);
    assert.equal(quantile([5, 1, 3, 2, 4], 0.99), 5);
    assert.equal(quantile([], 0.5), undefined);
    assert.equal(
      slope([
        { x: 0, y: 1 },
        { x: 2, y: 5 },
      ]),
      2,
    );
    assert.equal(slope([{ x: 1, y: 1 }]), 0);
  });
});

describe('the soak schedule', () => {
  test('every kind in each 5-minute cycle, inside the cycle, the cycles in time order', () => {
    const s = soakSchedule(1, STAGES, 30 * 60_000, 'detector dga_detector');
    assert.equal(s.length, 6 * (STAGES.length + 5));
    for (let c = 0; c < 6; c += 1) {
      const cycle = s.filter((f) => f.atMs >= c * 300_000 && f.atMs < (c + 1) * 300_000);
      assert.equal(cycle.length, STAGES.length + 5, `cycle ${c}`);
      assert.ok(
        cycle.every((f) => f.atMs < c * 300_000 + 180_000),
        'faults in the first 60 % of the cycle',
      );
    }
    assert.notDeepEqual(
      s.slice(0, 8).map((f) => f.kind),
      s.slice(8, 16).map((f) => f.kind),
      'each cycle its own order',
    );
  });

  test('a feed shorter than a cycle gets one schedule within it', () => {
    const s = soakSchedule(1, STAGES, 90_000);
    assert.equal(s.length, STAGES.length + 4);
    assert.ok(s.every((f) => f.atMs < 90_000));
  });
});

describe('soak charts', () => {
  test('round axis maxima', () => {
    assert.deepEqual([0, 0.7, 3, 7, 12, 4_500].map(niceMax), [1, 1, 5, 10, 20, 5_000]);
  });

  test('a series becomes a path, each fault a red line, labels escaped', () => {
    const svg = timeSeriesSvg({
      title: 'RSS <per process>',
      yLabel: 'MiB',
      series: [
        {
          label: 'collector',
          points: [
            { x: 0, y: 1 },
            { x: 60_000, y: 2 },
          ],
        },
      ],
      faults: [{ atMs: 30_000, label: 'stage-kill-9 collector' }],
    });
    assert.match(svg, /^<svg /);
    assert.match(svg, /<path d="M64\.0,[\d.]+L700\.0,[\d.]+"/);
    assert.equal((svg.match(/stroke="#d62728"/g) ?? []).length, 1);
    assert.match(svg, /RSS &lt;per process>/);
  });
});
