import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FAULT_KINDS, faultSchedule, networkCutTarget } from '../../../../src/verify/pipeline/faults.ts';

const STAGES = ['logserver', 'collector dga_collector', 'prefilter dga_prefilter', 'detector dga_detector'];

describe('the pipeline fault schedule of a seed', () => {
  test('kills every stage once, stops one, cuts one off, kills the agent, the broker and ClickHouse: every kind', () => {
    const cut = networkCutTarget(3, STAGES);
    assert.ok(cut !== undefined && STAGES.includes(cut));
    const s = faultSchedule(3, STAGES, 60_000, cut);
    assert.deepEqual(
      s.filter((f) => f.kind === 'network-cut').map((f) => f.target),
      [cut],
    );
    const kills = s.filter((f) => f.kind === 'stage-kill-9').map((f) => f.target);
    assert.deepEqual([...kills].sort(), [...STAGES].sort());
    const stopped = s.filter((f) => f.kind === 'stage-sigstop');
    assert.equal(stopped.length, 1);
    assert.ok(STAGES.includes(stopped[0]?.target ?? ''));
    assert.deepEqual([...new Set(s.map((f) => f.kind))].sort(), [...FAULT_KINDS].sort());
  });

  test('without a namespace, no cut and otherwise the same kinds', () => {
    const s = faultSchedule(3, STAGES, 60_000);
    assert.ok(!s.some((f) => f.kind === 'network-cut'));
    assert.deepEqual(
      [...new Set(s.map((f) => f.kind))].sort(),
      FAULT_KINDS.filter((k) => k !== 'network-cut').sort(),
    );
  });

  test('a short run kills one stage the seed picks, and injects every other fault as the full schedule does', () => {
    const cut = networkCutTarget(3, STAGES);
    const s = faultSchedule(3, STAGES, 60_000, cut, true);
    const kills = s.filter((f) => f.kind === 'stage-kill-9');
    assert.equal(kills.length, 1);
    assert.ok(STAGES.includes(kills[0]?.target ?? ''));
    assert.deepEqual([...new Set(s.map((f) => f.kind))].sort(), [...FAULT_KINDS].sort());
    const others = (p: typeof s) =>
      p.filter((f) => f.kind !== 'stage-kill-9').map((f) => `${f.kind}:${f.target}`);
    assert.deepEqual(others(s).sort(), others(faultSchedule(3, STAGES, 60_000, cut)).sort());
    const picked = new Set(
      [1, 2, 3, 4, 5, 6, 7, 8].map(
        (seed) => faultSchedule(seed, STAGES, 1, cut, true).find((f) => f.kind === 'stage-kill-9')?.target,
      ),
    );
    assert.ok(picked.size >= 2, `seeds pick different stages: ${[...picked].join(', ')}`);
  });

  test('spreads the faults evenly inside the feed, in time order', () => {
    const s = faultSchedule(3, STAGES, 60_000);
    const times = s.map((f) => f.atMs);
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
    );
    assert.ok(times.every((t) => t > 0 && t < 60_000));
    const gaps = times.slice(1).map((t, i) => t - (times[i] ?? 0));
    assert.ok(Math.max(...gaps) - Math.min(...gaps) <= 1, `even gaps: ${gaps.join(', ')}`);
  });

  test('the same seed gives the same schedule; other seeds other orders', () => {
    assert.deepEqual(faultSchedule(5, STAGES, 30_000), faultSchedule(5, STAGES, 30_000));
    const orders = new Set(
      [1, 2, 3, 4, 5].map((seed) =>
        faultSchedule(seed, STAGES, 30_000)
          .map((f) => `${f.kind}:${f.target}`)
          .join('|'),
      ),
    );
    assert.ok(orders.size >= 4, `${orders.size} distinct orders of 5 seeds`);
  });
});
