import type { FetchedRecord } from '../../kafka/records.ts';
import type { IsolatedResult } from '../worker/bisection.ts';
import type { Committer } from '../worker/committer.ts';
import { fail, type WorkerContext } from '../worker/worker-context.ts';
import { afterCommit } from './after-commit.ts';
import { positionKey } from './position-key.ts';
import { RefusedOutputs } from './refused-outputs.ts';
import {
  afterRefusal,
  decideSettlement,
  type SettlementInput,
  type SettlementPlan,
} from './settlement-plan.ts';
import type { StageOutput } from '../stage.ts';

export interface SettleDeps {
  committer: Committer;
  /** Processes records again (outputs of held-back records cannot be picked out of a batch's). */
  rerun(records: FetchedRecord[]): Promise<IsolatedResult>;
  rewind(): Promise<void>;
}

/**
 * Settles a processed batch in rounds of decide (settlement-plan.ts, pure), commit, and the
 * after-commit steps (after-commit.ts). A round whose commit Kafka refused for some outputs is
 * followed by one more decision on the same batch with those outputs' records failed, as long as
 * each refusal names a record not failed yet. A refusal of an output that names no source (one
 * made of several records, such as the logserver's frames) is traced by processing each record of
 * a stateless stage's batch alone, once: what a call of one record outputs is that record's. Any
 * other refusal goes to the loop's recovery.
 */
export async function settleBatch(
  ctx: WorkerContext,
  d: SettleDeps,
  records: FetchedRecord[],
  result: IsolatedResult,
  poison: FetchedRecord[],
  epoch: number,
): Promise<void> {
  const now = ctx.clock.now();
  const stage = ctx.stage;
  let input: SettlementInput = {
    records,
    outputs: result.outputs,
    failures: result.failures,
    poison,
    policy: ctx.policy,
    stageRetryable: stage.isRetryable ? (e: unknown) => stage.isRetryable?.(e) ?? true : undefined,
    history: (p) => ctx.failures.get(p),
    deliveries: (p) => ctx.deliveries.deliveries(p),
    deadLetterLimit: (outcomes) => ctx.deadLetterLimit.check(outcomes),
    stateful: ctx.stores !== undefined,
    group: ctx.groupId,
    stage: stage.name,
    now,
  };
  let alone = false;
  for (;;) {
    const plan = decideSettlement(input);
    if (plan.action === 'stop') return fail(ctx, plan.reason);
    let outputs = plan.outputs;
    if (outputs === undefined) {
      ctx.stores?.rollbackBatch();
      const again = await d.rerun(plan.rerun ?? []);
      if (again.failures.length > 0) {
        ctx.log.warn(
          { event: 'rerun-failed', failures: again.failures.length },
          'stage failed differently on rerun; rewinding',
        );
        return d.rewind();
      }
      outputs = again.outputs;
    }
    const outcome = await commit(d.committer, plan, outputs, epoch);
    if (outcome instanceof RefusedOutputs) {
      const next = afterRefusal(input, outcome);
      if ('error' in next && !alone && !input.stateful && outcome.unattributed.length > 0) {
        ctx.log.warn(
          { event: 'refused-untraced', records: input.records.length, err: outcome.message },
          'kafka: outputs refused that name no input record; processing each record of the batch alone',
        );
        const outputs = await outputsAlone(d, input);
        if (outputs === undefined) return d.rewind();
        input = { ...input, outputs };
        alone = true;
        continue;
      }
      if ('error' in next) throw next.error;
      ctx.log.warn(
        {
          event: 'refused',
          records: outcome.failures.map((f) => positionKey(f.record)),
          err: outcome.message,
        },
        'kafka: outputs refused; their input records take the record-error path',
      );
      input = next;
      continue;
    }
    if (outcome === 'committed') await afterCommit(ctx, d.committer, plan, now);
    return;
  }
}

/**
 * The outputs of a batch's records each processed in a call of its own, each naming its record;
 * undefined when a record fails alone that did not fail with the others (the loop rewinds).
 */
async function outputsAlone(d: SettleDeps, input: SettlementInput): Promise<StageOutput[] | undefined> {
  const failed = new Set(input.failures.map((f) => positionKey(f.record)));
  const outputs: StageOutput[] = [];
  for (const record of input.records) {
    if (failed.has(positionKey(record))) continue;
    const again = await d.rerun([record]);
    if (again.failures.length > 0) return undefined;
    for (const o of again.outputs) outputs.push(o.source ? o : { ...o, source: record });
  }
  return outputs;
}

/**
 * The commit of one round: the kept records' offsets, their outputs, the dead letters and the
 * retry-topic forwards in one go. A refusal of some outputs is an answer, not an error.
 */
async function commit(
  committer: Committer,
  plan: Extract<SettlementPlan, { action: 'commit' }>,
  outputs: StageOutput[],
  epoch: number,
): Promise<'committed' | 'stale' | RefusedOutputs> {
  if (plan.keep.length === 0) return 'committed';
  try {
    const extra = [...plan.deadLetters.map((x) => x.letter), ...plan.forwards];
    return (await committer.commit(plan.keep, epoch, outputs, extra)) ? 'committed' : 'stale';
  } catch (e) {
    if (e instanceof RefusedOutputs) return e;
    throw e;
  }
}
