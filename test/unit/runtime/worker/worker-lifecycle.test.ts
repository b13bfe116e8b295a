import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Logger } from '../../../../src/observability/logger.ts';
import {
  IllegalWorkerTransition,
  WORKER_LIFECYCLE,
  WorkerLifecycle,
  type WorkerState,
} from '../../../../src/runtime/worker/worker-lifecycle.ts';

const STATES = Object.keys(WORKER_LIFECYCLE) as WorkerState[];

/** The lifecycle's changes and the state each one asks for. */
const CHANGES = {
  started: 'running',
  recovering: 'recovering',
  stopping: 'stopping',
  stopped: 'stopped',
  fail: 'failed',
} as const satisfies Record<string, WorkerState>;
type Change = keyof typeof CHANGES;

function logged() {
  const errors: string[] = [];
  const log = {
    error: (_o: unknown, msg?: string) => {
      errors.push(msg ?? '');
    },
  } as Pick<Logger, 'error'>;
  return { errors, log };
}

function apply(l: WorkerLifecycle, change: Change): void {
  if (change === 'fail') l.fail('broken');
  else l[change]();
}

/** A lifecycle in `state`, reached through legal changes only. */
function inState(state: WorkerState): WorkerLifecycle {
  const l = new WorkerLifecycle(logged().log);
  const path: Record<WorkerState, Change[]> = {
    starting: [],
    running: ['started'],
    recovering: ['started', 'recovering'],
    stopping: ['started', 'stopping'],
    stopped: ['started', 'stopping', 'stopped'],
    failed: ['fail'],
  };
  for (const c of path[state]) apply(l, c);
  assert.equal(l.state, state);
  return l;
}

/** A failed worker stays failed through the stop; those two changes are no-ops there, not errors. */
const keptWhenFailed = (from: WorkerState, change: Change) =>
  from === 'failed' && (change === 'stopping' || change === 'stopped');

describe('the worker lifecycle: illegal changes throw and change nothing', () => {
  for (const from of STATES)
    for (const change of Object.keys(CHANGES) as Change[]) {
      const to = CHANGES[change];
      if (WORKER_LIFECYCLE[from].includes(to) || keptWhenFailed(from, change)) continue;
      it(`${change} in state ${from}`, () => {
        const l = inState(from);
        assert.throws(
          () => apply(l, change),
          (e: unknown) => e instanceof IllegalWorkerTransition && e.from === from && e.to === to,
        );
        assert.equal(l.state, from);
      });
    }
});

describe('the worker lifecycle: legal sequences', () => {
  it('start, recover, commit, stop', () => {
    const l = inState('starting');
    l.started();
    l.recovering();
    l.recovering();
    assert.equal(l.state, 'recovering');
    l.committed();
    assert.equal(l.state, 'running', 'a commit ends the recovery');
    l.committed();
    assert.equal(l.state, 'running');
    l.requestStop();
    assert.equal(l.stopRequested, true);
    l.stopping();
    l.committed();
    assert.equal(l.state, 'stopping', 'a commit at the stop does not revive the loop');
    l.stopped();
    assert.equal(l.state, 'stopped');
    assert.equal(l.failure, undefined);
  });

  it('a failure stops the loop, names the reason, and survives the stop', () => {
    const { errors, log } = logged();
    const l = new WorkerLifecycle(log);
    l.started();
    l.fail('fenced');
    assert.equal(l.stopRequested, true);
    assert.equal(l.failure, 'fenced');
    assert.deepEqual(errors, ['worker stopped: fenced']);
    l.stopping();
    l.fail('abort failed at stop');
    l.stopped();
    assert.equal(l.state, 'failed');
    assert.equal(l.failure, 'abort failed at stop');
  });

  it('a failure at the start (configuration) never runs', () => {
    const l = inState('starting');
    l.fail('configuration error');
    assert.equal(l.state, 'failed');
    assert.throws(() => l.started(), IllegalWorkerTransition);
  });
});
