import type { FetchedRecord } from '../../kafka/records.ts';
import { tpKey } from '../../kafka/records.ts';
import { deadLetterOf } from '../dead-letter.ts';
import { errorKindOf } from '../record-error-policy.ts';
import { asOriginal } from '../retry-topics.ts';
import { RefusedOutputs } from '../refused-outputs.ts';
import { planSettlement, positionKey } from '../settlement.ts';
import type { StageOutput } from '../stage.ts';
import type { IsolatedResult } from './bisection.ts';
import type { Committer } from './committer.ts';
import { errorText, fail, type WorkerContext } from './worker-context.ts';

export interface SettleDeps {
  committer: Committer;
  /** Processes records again (outputs of held-back records cannot be picked out of a batch's). */
  rerun(records: FetchedRecord[]): Promise<IsolatedResult>;
  rewind(): Promise<void>;
}

/**
 * Commits what a processed batch allows, dead-letters what must go (stopping the worker past the
 * dead-letter limit), and holds the partitions of records that wait for a retry.
 */
export async function settleBatch(
  ctx: WorkerContext,
  d: SettleDeps,
  records: FetchedRecord[],
  result: IsolatedResult,
  poison: FetchedRecord[],
  epoch: number,
  /** Settled again because Kafka refused outputs of these records: a second refusal is not traced again. */
  refusedBefore = false,
): Promise<void> {
  const now = ctx.clock.now();
  const stage = ctx.stage;
  const plan = planSettlement({
    records,
    outputs: result.outputs,
    failures: result.failures,
    poison,
    policy: ctx.policy,
    ...(stage.isRetryable ? { stageRetryable: (e: unknown) => stage.isRetryable!(e) } : {}),
    tracker: ctx.failures,
    now,
  });
  const dead = new Set(plan.deadLetters.map((x) => positionKey(x.record)));
  // Store changes name no source record: after any failure, a stateful stage's batch is processed
  // again on exactly the records it commits, so its changes are theirs and nothing else's.
  let outputs = ctx.stores && result.failures.length > 0 ? undefined : plan.outputs;
  if (outputs === undefined) {
    ctx.stores?.rollbackBatch();
    const again = await d.rerun(plan.keep.filter((r) => !dead.has(positionKey(r)) && !poison.includes(r)));
    if (again.failures.length > 0) {
      ctx.log.warn(
        { event: 'rerun-failed', failures: again.failures.length },
        'stage failed differently on rerun; rewinding',
      );
      return d.rewind();
    }
    outputs = again.outputs;
  }
  if (ctx.policy.deadLetters === false && plan.deadLetters.length > 0) {
    const x = plan.deadLetters[0]!;
    fail(
      ctx,
      `record ${positionKey(x.record)} failed (${x.kind}) and record_errors.dead_letters is false: ` +
        `${errorText(x.error)}; consumption stopped, nothing of this batch committed`,
    );
    return;
  }
  const tripped = ctx.deadLetterLimit.record(plan.keep.map((r) => dead.has(positionKey(r))));
  if (tripped !== undefined) {
    fail(ctx, `dead-letter limit exceeded: ${tripped}; consumption stopped, nothing of this batch committed`);
    return;
  }
  const deadLetters = plan.deadLetters.map((x) =>
    deadLetter(ctx, asOriginal(x.record), x.error, x.kind, x.history),
  );
  let committed: boolean;
  try {
    committed =
      plan.keep.length === 0 ||
      (await d.committer.commit(plan.keep, epoch, outputs, [...deadLetters, ...plan.forwards]));
  } catch (e) {
    if (!(e instanceof RefusedOutputs) || refusedBefore) throw e;
    // Untraceable: the loop's recovery rewinds, and stops when the same refusal keeps coming.
    if (e.unattributed.length > 0 || e.failures.length === 0) throw e.unattributed[0] ?? e;
    ctx.log.warn(
      { event: 'refused', records: e.failures.map((f) => positionKey(f.record)), err: e.message },
      'kafka: outputs refused; their input records take the record-error path',
    );
    const failed = new Set(e.failures.map((f) => positionKey(f.record)));
    const theirs = (o: StageOutput) =>
      records.length === 1 || (o.source !== undefined && failed.has(positionKey(o.source)));
    const again = {
      outputs: result.outputs.filter((o) => !theirs(o)),
      failures: [...result.failures, ...e.failures],
    };
    return settleBatch(ctx, d, records, again, poison, epoch, true);
  }
  if (!committed) return;
  if (plan.forwards.length > 0) ctx.metrics.retries.inc({ error_kind: 'retry-topic' }, plan.forwards.length);
  for (const x of plan.deadLetters) ctx.metrics.deadLetters.inc({ error_kind: x.kind });
  // A hold rewinds its partition past this batch's committed records: only once the commit held.
  if (plan.retries.length > 0) await d.committer.settle?.();
  for (const r of plan.keep) ctx.failures.forget(r);
  for (const r of plan.retries) {
    ctx.holds.hold(r.partition, r.offset, now + r.delayMs);
    ctx.metrics.retries.inc({ error_kind: errorKindOf(r.error) });
    ctx.log.warn(
      {
        event: 'retry',
        partition: tpKey(r.partition),
        offset: r.offset,
        attempt: r.attempt,
        delayMs: r.delayMs,
        err: errorText(r.error),
      },
      'record failed; its partition waits for the retry, the others flow on',
    );
  }
  await ctx.deliveries.settled(plan.retries.map((r) => ({ ...r.partition, offset: r.offset })));
}

function deadLetter(
  ctx: WorkerContext,
  record: FetchedRecord,
  error: unknown,
  errorKind: string,
  history: { attempts: number; firstFailure: number; lastFailure: number },
): StageOutput {
  return deadLetterOf(record, ctx.policy.deadLetterTopic(record.topic), {
    group: ctx.groupId,
    stage: ctx.stage.name,
    errorKind,
    error,
    attempts: history.attempts,
    firstFailure: history.firstFailure,
    lastFailure: history.lastFailure,
  });
}
