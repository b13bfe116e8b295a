import { isRuntimeError } from '../kafka/classify.ts';
import { code } from '../kafka/error-codes.ts';
import type { KafkaError } from '../kafka/kafka-error.ts';

/**
 * What the worker does about a classified Kafka error. The loop never decides: it asks `planRecovery`
 * and carries the plan out step by step.
 * - retry-in-place: the same call again with the same clients and positions (no abort, no seek).
 * - rewind: keep both clients, seek the assigned partitions back to the group's committed offsets.
 * - reset-consumer: close the consumer (leave the stale generation), subscribe a fresh one.
 * - recreate-producer: new producer with the same transactional id (fences nothing but our own past),
 *   then (unless the abort alone failed) reset the consumer so the batch is fetched again.
 *   A producer fenced by a newer instance is NOT recreated: that would fence the newer instance, which
 *   would do the same (a ping-pong seen in the zombie test). The fenced instance is the zombie; it stops.
 *   The one exception is a fence on ending a transaction (commit or abort) under transaction protocol
 *   version 2, which can be the broker's mistake (see `ambiguousFence`): recreated once per window.
 * - close-producer: an abort failed while the worker stops anyway; the producer is only closed.
 * - reconnect: close both clients, wait (visible back-off) until Kafka answers, recreate and init
 *   the producer, subscribe a fresh consumer.
 * - ignore: nothing to do now (a consumer error the client recovers from by itself); logged.
 * - stop: nothing local can fix it; the worker stops, reports the reason and is not live.
 */
export type RecoveryAction =
  | { type: 'retry-in-place' }
  | { type: 'rewind' }
  | { type: 'reset-consumer' }
  | { type: 'recreate-producer'; why: RecreateReason }
  | { type: 'close-producer' }
  | { type: 'reconnect' }
  | { type: 'ignore' }
  | { type: 'stop'; reason: string };

export type RecreateReason = 'fatal' | 'unknown-commit-outcome' | 'abort-failed' | 'fenced-end';

/** One thing the recovery executor does; a plan's steps run in order. */
export type RecoveryStep =
  'rewind' | 'start-consumer' | 'reset-consumer' | 'close-producer' | 'start-producer' | 'reconnect';

/**
 * Where the error happened. The same error can need different handling: a transport error at start
 * enters the reconnect loop; an error while aborting must not abort again.
 * - start: creating the clients in `start()`.
 * - call: a Kafka call wrapped in in-place retries (transactional calls, committed offsets).
 * - loop: an error thrown out of one iteration of the loop.
 * - consumer-error: reported asynchronously by the consumer's error callback.
 * - abort: `abortTransaction` failed (after its in-place retries).
 * - rewind: seeking back to the committed offsets failed.
 * - reconnect: one attempt of the reconnect loop failed.
 * - step-failed: a step of an earlier plan failed.
 */
export type RecoverySituation =
  'start' | 'call' | 'loop' | 'consumer-error' | 'abort' | 'rewind' | 'reconnect' | 'step-failed';

/** Signals the plan asks the worker to raise (metrics and alert conditions), decided here, not by codes in the loop. */
export type RecoverySignal = 'max-poll-exceeded' | 'membership-error';

/** A decision as data: the action (for logs and metrics), and how to carry it out. */
export type RecoveryPlan = RecoveryAction & {
  /** Abort the open transaction (bounded) and discard its outputs before the steps. */
  abortFirst: boolean;
  steps: RecoveryStep[];
  /** When a step throws: plan again for `step-failed` (`replan`), or stop naming the failure. */
  onStepFailure: 'replan' | 'stop';
  signals: RecoverySignal[];
};

export interface RecoveryContext {
  /** Default `loop`. */
  situation?: RecoverySituation;
  /** The API timeout of the failing call has passed (retries exhausted). */
  deadlinePassed: boolean;
  /** Fatal producer errors within the last minute, including this one. */
  recentFatal: number;
  /** Above this many fatal errors in a minute, recreating the producer is not helping: stop. */
  fatalLimit: number;
  /** Errors of kind `other` (or untraceable `refused`) identical to this one within the window, including this one. */
  recentOther?: number;
  /** Above this many identical `other` errors in the window, rewinding is not helping: stop. */
  otherLimit?: number;
  /** The worker has a consumer (a rewind needs one; without one, a fresh consumer is started). */
  hasConsumer?: boolean;
  /** A transaction is open (a retry in place is then impossible: the batch's work is gone). */
  transactionOpen?: boolean;
  /** The worker is stopping: nothing is recreated. */
  stopping?: boolean;
  /** Transaction protocol version 2 is configured: every transaction's end bumps the producer epoch. */
  endBumpsEpoch?: boolean;
  /** Fences on ending a transaction (commit or abort) within the fence window, this one included. */
  recentEndFences?: number;
  /** How long the commit or abort call that failed took (`Transaction.lastEndMs`). */
  endCallMs?: number;
}

const MAX_POLL_EXCEEDED = code('_MAX_POLL_EXCEEDED');
const UNKNOWN_MEMBER_ID = code('UNKNOWN_MEMBER_ID');
// librdkafka reconnects by itself after a single broker's transport error; only "all brokers down"
// means the worker's clients are cut off and must be rebuilt through the visible reconnect loop.
const ALL_BROKERS_DOWN = code('_ALL_BROKERS_DOWN');
const CONFLICT = code('_CONFLICT');

function plan(
  action: RecoveryAction,
  steps: RecoveryStep[],
  opts: { abortFirst?: boolean; onStepFailure?: 'replan' | 'stop'; signals?: RecoverySignal[] } = {},
): RecoveryPlan {
  return {
    ...action,
    abortFirst: opts.abortFirst ?? (action.type !== 'reconnect' && action.type !== 'ignore'),
    steps,
    onStepFailure: opts.onStepFailure ?? 'replan',
    signals: opts.signals ?? [],
  };
}

const stop = (reason: string, steps: RecoveryStep[] = []): RecoveryPlan =>
  plan({ type: 'stop', reason }, steps, { onStepFailure: 'stop' });
const reconnect = (onStepFailure: 'replan' | 'stop' = 'replan'): RecoveryPlan =>
  plan({ type: 'reconnect' }, ['reconnect'], { abortFirst: false, onStepFailure });

function describe(err: KafkaError): string {
  if (isRuntimeError(err)) return err.message;
  return `${err.codeName} during ${err.operation}: ${err.message}`;
}

/** Errors no local step can fix, in any situation. */
function unrecoverable(err: KafkaError, steps: RecoveryStep[] = []): RecoveryPlan | undefined {
  switch (err.kind) {
    case 'config':
      return stop(`configuration error: ${describe(err)}`, steps);
    case 'authorization':
      return stop(`not authorized: ${describe(err)}`, steps);
    case 'fenced':
      return stop(
        'fenced: a newer instance uses the same transactional id, so this instance is a zombie and stops',
        steps,
      );
    default:
      return undefined;
  }
}

function membershipSignals(err: KafkaError): RecoverySignal[] {
  const signals: RecoverySignal[] = [];
  if (err.code === MAX_POLL_EXCEEDED) signals.push('max-poll-exceeded');
  if (err.kind === 'membership' || err.code === MAX_POLL_EXCEEDED || err.code === UNKNOWN_MEMBER_ID)
    signals.push('membership-error');
  return signals;
}

/** The one place where recovery is decided. Pure: same error and context, same plan. */
export function planRecovery(err: KafkaError, ctx: RecoveryContext): RecoveryPlan {
  switch (ctx.situation ?? 'loop') {
    case 'start':
      return planStart(err, ctx);
    case 'consumer-error':
      return planConsumerError(err);
    case 'abort':
      return planAbortFailure(err, ctx);
    case 'rewind':
      return unrecoverable(err) ?? (err.kind === 'transport' ? reconnect() : resetConsumer());
    case 'reconnect':
      // While Kafka comes back, its errors vary (timeouts, coordinator loading, a producer failing
      // init); a configuration or authorization error never goes away and would loop forever.
      return unrecoverable(err) ?? reconnect();
    case 'step-failed':
      // Kafka went away during the recovery: the transport path covers every other case.
      return unrecoverable(err) ?? reconnect('stop');
    case 'call':
      return err.kind === 'retriable' && !ctx.deadlinePassed && !abortBehindRunningCommit(err)
        ? plan({ type: 'retry-in-place' }, [], { abortFirst: false })
        : planLoop(err, { ...ctx, transactionOpen: true });
    case 'loop':
      return planLoop(err, ctx);
  }
}

/**
 * A commit that librdkafka itself timed out stays in progress inside it until its records are
 * delivered or expire (message.timeout.ms), and every abort meanwhile fails with _CONFLICT. Retrying
 * the abort in place held the worker away from its consumer for the whole API timeout (30 s after a
 * 30 s commit, in a machine-loss run), and its group's rebalance waited for it; the abort's failure
 * plan (a new producer, whose init fences this one) is the way out, so it is taken at once.
 */
function abortBehindRunningCommit(err: KafkaError): boolean {
  return err.operation === 'abort-transaction' && err.code === CONFLICT;
}

function resetConsumer(signals: RecoverySignal[] = []): RecoveryPlan {
  return plan({ type: 'reset-consumer' }, ['reset-consumer'], { signals });
}

function planStart(err: KafkaError, ctx: RecoveryContext): RecoveryPlan {
  const fatal = unrecoverable(err);
  if (fatal) return fatal;
  if (err.kind === 'transport' || err.kind === 'retriable') return reconnect();
  if (err.kind === 'fatal' && ctx.recentFatal <= ctx.fatalLimit) return reconnect();
  return stop(`could not start the Kafka clients: ${err.kind} error ${describe(err)}`);
}

function planConsumerError(err: KafkaError): RecoveryPlan {
  const signals = membershipSignals(err);
  const fatal = unrecoverable(err);
  if (fatal) return { ...fatal, signals };
  if (err.kind === 'membership') return resetConsumer(signals);
  if (err.code === ALL_BROKERS_DOWN) return { ...reconnect(), signals };
  return plan({ type: 'ignore' }, [], { signals });
}

function planAbortFailure(err: KafkaError, ctx: RecoveryContext): RecoveryPlan {
  // The failed producer is closed in every case; the steps say what replaces it.
  // A worker already stopping (a zombie found in the loop, or a clean stop) closes its fenced producer:
  // a new one would fence the instance that fenced it.
  const fatal =
    ambiguousFence(err, ctx) && !ctx.stopping ? undefined : unrecoverable(err, ['close-producer']);
  if (fatal) return { ...fatal, abortFirst: false };
  // Stopping: a new producer with the same transactional id makes the coordinator abort the open
  // transaction at once (init fences the old epoch); closing alone would leave it open, holding
  // read_committed readers back, until transaction.timeout.ms.
  if (ctx.stopping)
    return plan({ type: 'close-producer' }, ['close-producer', 'start-producer', 'close-producer'], {
      abortFirst: false,
    });
  if (err.kind === 'transport') return reconnect();
  const why = err.kind === 'fenced' ? 'fenced-end' : 'abort-failed';
  return plan({ type: 'recreate-producer', why }, ['close-producer', 'start-producer'], {
    abortFirst: false,
  });
}

function planLoop(err: KafkaError, ctx: RecoveryContext): RecoveryPlan {
  const rewind = () => plan({ type: 'rewind' }, [ctx.hasConsumer === false ? 'start-consumer' : 'rewind']);
  switch (err.kind) {
    case 'fenced':
      if (ambiguousFence(err, ctx))
        return plan({ type: 'recreate-producer', why: 'fenced-end' }, RECREATE_STEPS, { abortFirst: false });
      return unrecoverable(err)!;
    case 'config':
    case 'authorization':
      return unrecoverable(err)!;
    case 'membership':
      return resetConsumer(membershipSignals(err));
    case 'transport':
      return reconnect();
    case 'abortable':
      return rewind();
    case 'refused':
      // A refusal traced to its input record never gets here: the record takes the record-error
      // path (dead letter or stop). This one could not be traced (an output without a source in a
      // batch of several records): the batch is fetched again, and the same refusal repeating means
      // it never will commit.
      if ((ctx.recentOther ?? 1) > (ctx.otherLimit ?? Infinity))
        return stop(
          `Kafka refused the same output ${ctx.recentOther} times within the window and it cannot be traced to ` +
            `its input record (give the stage's outputs a source): ${describe(err)}`,
        );
      return rewind();
    case 'other':
      if ((ctx.recentOther ?? 1) > (ctx.otherLimit ?? Infinity))
        return stop(
          `the same unclassified error happened ${ctx.recentOther} times within the window: ${describe(err)}`,
        );
      return rewind();
    case 'retriable':
      if (!ctx.deadlinePassed) {
        // Nothing is lost when no transaction is open: the next iteration repeats the call as it was.
        if (!ctx.transactionOpen) return plan({ type: 'retry-in-place' }, [], { abortFirst: false });
        return rewind();
      }
      // After a commit of unknown outcome the producer knows neither whether the transaction ended
      // nor (transaction version 2 bumps it at every end) its epoch: only a new producer (which
      // aborts or completes the old transaction on init) makes the next transaction safe.
      if (err.operation === 'commit-transaction') return recreateProducer('unknown-commit-outcome');
      if (err.operation === 'abort-transaction') return recreateProducer('abort-failed');
      return reconnect();
    case 'fatal':
      if (ctx.recentFatal > ctx.fatalLimit)
        return stop(`producer failed fatally ${ctx.recentFatal} times within a minute`);
      return recreateProducer('fatal');
  }
}

const RECREATE_STEPS: RecoveryStep[] = ['close-producer', 'start-producer', 'reset-consumer'];

function recreateProducer(why: RecreateReason): RecoveryPlan {
  return plan({ type: 'recreate-producer', why }, RECREATE_STEPS);
}

/**
 * A retried end lasted at least this long: its first attempt met a coordinator that stopped
 * answering, and a failover waits for the broker session timeout (seconds). A zombie's end is
 * refused in one round trip.
 */
const RETRIED_END_MS = 3_000;

/**
 * Under transaction protocol version 2 every EndTxn (commit or abort) bumps the producer epoch. In
 * the 3-broker chaos runs (a transaction coordinator stopped for 8 s) a commit and an abort came back
 * PRODUCER_FENCED although no other instance existed. What the broker did there is not known: an
 * EndTxn retried at the new coordinator after a failover put exactly between its record and its
 * answer, or sent to a coordinator stopped past the broker session, is answered as the retry it is
 * (test/integration/runtime/coordinator-failover.test.ts). Such an end took seconds; a zombie's is
 * refused at once, and giving a zombie a new producer would fence the live instance (a zombie whose
 * batch was revoked aborts, and is fenced there). So a fence is taken for the broker's mistake only
 * on an end that lasted RETRIED_END_MS, once per window: a new producer resolves it as it resolves
 * any end of unknown outcome (its init completes or aborts the transaction, and the consumer resumes
 * from the committed offsets). Should a zombie's end still meet a failover, the instance its new
 * producer fences stops or recreates once, and a second such fence within the window stops it: one
 * of the two survives, and exactly once holds throughout. Under version 1 the coordinator recognises
 * a retry by its unchanged epoch, so a fence is a zombie.
 */
function ambiguousFence(err: KafkaError, ctx: RecoveryContext): boolean {
  return (
    err.kind === 'fenced' &&
    isTransactionEnd(err) &&
    ctx.endBumpsEpoch === true &&
    (ctx.endCallMs ?? 0) >= RETRIED_END_MS &&
    (ctx.recentEndFences ?? 1) <= 1
  );
}

/** The error came from ending a transaction (EndTxn): a commit or an abort. */
export function isTransactionEnd(err: KafkaError): boolean {
  return err.operation === 'commit-transaction' || err.operation === 'abort-transaction';
}
