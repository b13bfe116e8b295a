import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AlertConditions, type AlertOptions } from '../../../src/runtime/alert-conditions.ts';
import type { Clock } from '../../../src/runtime/clock.ts';
import { observeCoverage, type GroupCoveragePort } from '../../../src/runtime/group-coverage.ts';

class FakeClock implements Clock {
  constructor(public t = 1_000_000) {}
  now(): number {
    return this.t;
  }
  sleep(ms: number): Promise<void> {
    this.t += ms;
    return Promise.resolve();
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

const opts: AlertOptions = { windowMs: 60_000, repeatedRecoveries: 3, stallMs: 10_000 };

function setup() {
  const clock = new FakeClock();
  return { clock, alerts: new AlertConditions(clock, opts) };
}

describe('AlertConditions', () => {
  it('holds nothing at start', () => {
    assert.deepEqual(setup().alerts.active(), []);
  });

  const oneEvent = [
    [
      'max_poll_exceeded_or_unknown_member',
      'a membership error',
      (a: AlertConditions) => a.membershipError(),
    ],
    ['records_below_commit', 'records fetched below the own commit', (a: AlertConditions) => a.belowCommit()],
  ] as const;
  for (const [condition, event, raise] of oneEvent)
    it(`raises ${condition} on ${event} until the window passes`, () => {
      const { clock, alerts } = setup();
      raise(alerts);
      assert.deepEqual(alerts.active(), [condition]);
      clock.advance(59_999);
      assert.deepEqual(alerts.active(), [condition]);
      clock.advance(2);
      assert.deepEqual(alerts.active(), []);
    });

  it('raises repeated_recovery_after_revoke after enough recoveries following a revoke, until the window passes', () => {
    const { clock, alerts } = setup();
    alerts.revokedOrLost();
    alerts.recovery();
    clock.advance(1_000);
    alerts.recovery();
    assert.deepEqual(alerts.active(), []);
    clock.advance(1_000);
    alerts.recovery();
    assert.deepEqual(alerts.active(), ['repeated_recovery_after_revoke']);
    // The first recovery leaves the window: two remain, below the threshold.
    clock.advance(58_001);
    assert.deepEqual(alerts.active(), []);
  });

  it('does not count recoveries without a preceding revoke or lost', () => {
    const { alerts } = setup();
    for (let i = 0; i < 5; i += 1) alerts.recovery();
    assert.deepEqual(alerts.active(), []);
  });

  it('starts counting recoveries afresh at each revoke', () => {
    const { alerts } = setup();
    alerts.revokedOrLost();
    alerts.recovery();
    alerts.recovery();
    alerts.revokedOrLost();
    alerts.recovery();
    assert.deepEqual(alerts.active(), []);
  });

  it('raises aborts_while_lag_grows when aborts happen while lag rises, until the window passes', () => {
    const { clock, alerts } = setup();
    alerts.lag(100);
    clock.advance(1_000);
    alerts.aborted();
    alerts.lag(150);
    assert.deepEqual(alerts.active(), ['aborts_while_lag_grows']);
    clock.advance(60_001);
    assert.deepEqual(alerts.active(), []);
  });

  it('does not raise aborts_while_lag_grows when the lag shrinks or nothing aborted', () => {
    const { clock, alerts } = setup();
    alerts.lag(100);
    clock.advance(1_000);
    alerts.lag(200);
    assert.deepEqual(alerts.active(), [], 'lag alone');
    alerts.aborted();
    alerts.lag(50);
    assert.deepEqual(alerts.active(), [], 'lag below its first sample');
  });

  it('raises no_commit_while_input_arrives once input waited stallMs without a commit, clears on commit', () => {
    const { clock, alerts } = setup();
    alerts.committed();
    alerts.consumed(10);
    clock.advance(9_999);
    assert.deepEqual(alerts.active(), []);
    clock.advance(1);
    assert.deepEqual(alerts.active(), ['no_commit_while_input_arrives']);
    alerts.committed();
    assert.deepEqual(alerts.active(), []);
  });

  it('does not raise no_commit_while_input_arrives while no input arrives', () => {
    const { clock, alerts } = setup();
    clock.advance(1_000_000);
    alerts.consumed(0);
    assert.deepEqual(alerts.active(), []);
  });

  it('reports several conditions at once', () => {
    const { clock, alerts } = setup();
    alerts.membershipError();
    alerts.consumed(1);
    clock.advance(10_000);
    assert.deepEqual(alerts.active(), [
      'max_poll_exceeded_or_unknown_member',
      'no_commit_while_input_arrives',
    ]);
  });

  it('raises partition_unowned for a partition nobody owned for longer than the bound, and names it', () => {
    const clock = new FakeClock();
    const alerts = new AlertConditions(clock, { ...opts, unownedMs: 15_000 });
    alerts.coverage(['in:0', 'in:1', 'in:2'], ['in:0']);
    clock.advance(10_000);
    alerts.coverage(['in:0', 'in:1', 'in:2'], ['in:0', 'in:1']);
    assert.deepEqual(alerts.active(), []);
    clock.advance(5_000);
    alerts.coverage(['in:0', 'in:1', 'in:2'], ['in:0', 'in:1']);
    assert.deepEqual(alerts.active(), ['partition_unowned']);
    assert.deepEqual(alerts.unowned(), ['in:2']);
    alerts.coverage(['in:0', 'in:1', 'in:2'], ['in:0', 'in:1', 'in:2']);
    assert.deepEqual(alerts.active(), []);
    assert.deepEqual(alerts.unowned(), []);
  });
});

describe('observeCoverage', () => {
  it('expands partition counts from metadata and compares them with the group assignment', async () => {
    const port: GroupCoveragePort = {
      partitionCounts: (topics) => Promise.resolve(new Map(topics.map((t) => [t, t === 'a' ? 2 : 1]))),
      ownedPartitions: (group) => Promise.resolve(group === 'g' ? ['a:1'] : []),
    };
    assert.deepEqual(await observeCoverage(port, 'g', ['a', 'b']), {
      expected: ['a:0', 'a:1', 'b:0'],
      owned: ['a:1'],
    });
  });
});
