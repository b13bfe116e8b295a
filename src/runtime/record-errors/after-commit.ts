import { tpKey } from '../../kafka/records.ts';
import type { Committer } from '../worker/committer.ts';
import { errorText, type WorkerContext } from '../worker/worker-context.ts';
import { errorKindOf } from './policy.ts';
import type { DeadLetterDecision, SettlementPlan } from './settlement-plan.ts';

/**
 * What follows a settlement's commit, and only once it held: metrics, one log line per dead letter,
 * the dead-letter limit's window, the failure histories, and the holds of partitions waiting for a
 * retry (with their delivery markers reset: a handled failure is not a lost delivery).
 */
export async function afterCommit(
  ctx: WorkerContext,
  committer: Committer,
  plan: Extract<SettlementPlan, { action: 'commit' }>,
  /** When the batch was settled: retry delays count from here. */
  now: number,
): Promise<void> {
  if (plan.forwards.length > 0) ctx.metrics.retries.inc({ error_kind: 'retry-topic' }, plan.forwards.length);
  for (const x of plan.deadLetters) {
    ctx.metrics.deadLetters.inc({ error_kind: x.kind });
    logDeadLetter(ctx, x);
  }
  ctx.deadLetterLimit.record(plan.outcomes);
  // A hold rewinds its partition past this batch's committed records: only once the commit held.
  if (plan.retries.length > 0) await committer.settle?.();
  for (const r of plan.keep) ctx.failures.forget(r);
  for (const f of plan.failed) ctx.failures.remember(f.position, f.history);
  for (const r of plan.retries) {
    ctx.holds.hold(r.partition, r.offset, now + r.delayMs);
    ctx.metrics.retries.inc({ error_kind: errorKindOf(r.error) });
    const retry = {
      event: 'retry',
      partition: tpKey(r.partition),
      offset: r.offset,
      attempt: r.attempt,
      delayMs: r.delayMs,
      errorClass: r.error instanceof Error ? r.error.name : typeof r.error,
    };
    ctx.log.warn(retry, 'record failed; its partition waits for the retry, the others flow on');
    // A stage may build the message from the record (a DNS name, a client IP): debug only.
    ctx.log.debug({ ...retry, err: errorText(r.error) }, 'retry: the error');
  }
  await ctx.deliveries.settled(plan.retries.map((r) => ({ ...r.partition, offset: r.offset })));
}

/**
 * One warning per dead letter: where the record came from, why, and where it went. Never its key or
 * value (DNS names are sensitive); the error's message, which a stage may build from them, only at
 * debug.
 */
function logDeadLetter(ctx: WorkerContext, x: DeadLetterDecision): void {
  const where = {
    event: 'dead-letter',
    topic: x.record.topic,
    partition: x.record.partition,
    offset: x.record.offset,
    kind: x.kind,
    errorClass: x.error instanceof Error ? x.error.name : typeof x.error,
    attempts: x.history.attempts,
    deadLetterTopic: x.letter.topic,
  };
  ctx.log.warn(where, `record dead-lettered to ${x.letter.topic} (${x.kind})`);
  ctx.log.debug({ ...where, err: errorText(x.error) }, 'dead letter: the error');
}
