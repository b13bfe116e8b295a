import type { GroupMetadataSource } from '../../kafka/consumer.ts';
import type { ProducerPort } from '../../kafka/producer.ts';
import type { OutgoingRecord, TopicPartitionOffset } from '../../kafka/records.ts';
import type { KafkaSession } from '../kafka-session.ts';
import { HamstringError } from '../../errors/hamstring-error.ts';
import { systemClock, type Clock } from '../clock.ts';

/**
 * The worker's Kafka transaction as one guarded state machine. Every transactional call the runtime
 * makes (begin, produce, send offsets, commit, abort) and every event that ends a transaction
 * without a call (the producer is closed or replaced: abandon; a new producer initialised:
 * producer-ready) goes through {@link Transaction}, which looks the call up in
 * {@link TRANSACTION_TABLE}: a call the table does not list for the current state throws
 * {@link IllegalTransactionCall} before anything reaches Kafka.
 *
 * States:
 * - `uninitialised`: no initialised transactional producer (before the start; after the producer
 *   was closed, a reconnect gave the open transaction up, or an abort failed). A new producer's
 *   init aborts whatever the old one left open at the coordinator.
 * - `ready`: no transaction open; the next one may begin.
 * - `beginning`, `sending-offsets`, `committing`, `aborting`: that call is under way (the commit
 *   may run while the loop fetches the next batch); nothing else may touch the transaction.
 * - `open`: records may join it, the input offsets may be sent, it may commit or abort.
 * - `failed`: a call inside the transaction failed (a refused record, a failed send or commit):
 *   its outcome is unknown or its work lost, so it can only be aborted or abandoned.
 *
 * A call that fails leaves the state its row names under `failed` (or the state it had); the
 * error is rethrown unchanged, so the recovery plans see what Kafka said. `abandon` is legal in
 * every state: it records that the producer is gone, which no state can refuse; a call still
 * under way then ends without changing the state.
 */

export const TRANSACTION_STATES = [
  'uninitialised',
  'ready',
  'beginning',
  'open',
  'sending-offsets',
  'committing',
  'failed',
  'aborting',
] as const;
export type TransactionState = (typeof TRANSACTION_STATES)[number];

export const TRANSACTION_CALLS = [
  'producer-ready',
  'begin',
  'produce',
  'send-offsets',
  'commit',
  'abort',
  'abandon',
] as const;
export type TransactionCall = (typeof TRANSACTION_CALLS)[number];

export interface Transition {
  /** The state while the call runs; absent for a call that completes at once. */
  readonly during?: TransactionState;
  /** The state after the call returned. */
  readonly then: TransactionState;
  /** The state after the call threw; absent: the state it had before. */
  readonly failed?: TransactionState;
}

/** The legal calls per state. A call missing from its state's row is illegal there. */
export const TRANSACTION_TABLE: Readonly<
  Record<TransactionState, Readonly<Partial<Record<TransactionCall, Transition>>>>
> = {
  uninitialised: {
    'producer-ready': { then: 'ready' },
    abandon: { then: 'uninitialised' },
  },
  ready: {
    begin: { during: 'beginning', then: 'open', failed: 'ready' },
    abandon: { then: 'uninitialised' },
  },
  beginning: { abandon: { then: 'uninitialised' } },
  open: {
    produce: { then: 'open', failed: 'failed' },
    'send-offsets': { during: 'sending-offsets', then: 'open', failed: 'failed' },
    commit: { during: 'committing', then: 'ready', failed: 'failed' },
    abort: { during: 'aborting', then: 'ready', failed: 'uninitialised' },
    abandon: { then: 'uninitialised' },
  },
  'sending-offsets': { abandon: { then: 'uninitialised' } },
  committing: { abandon: { then: 'uninitialised' } },
  failed: {
    abort: { during: 'aborting', then: 'ready', failed: 'uninitialised' },
    abandon: { then: 'uninitialised' },
  },
  aborting: { abandon: { then: 'uninitialised' } },
};

/** A transactional call made in a state whose row does not list it: a defect of the runtime. */
export class IllegalTransactionCall extends HamstringError {
  override readonly name = 'IllegalTransactionCall';
  readonly code = 'TRANSACTION_CALL_ILLEGAL';
  constructor(
    readonly state: TransactionState,
    readonly call: TransactionCall,
  ) {
    super(`transaction: ${call} is illegal in state ${state}`);
  }
}

/** What the transaction needs of the Kafka session: its producer, the consumer's group metadata, in-place retries. */
export interface TransactionSession {
  readonly producer: ProducerPort;
  readonly consumer: GroupMetadataSource;
  retryInPlace: KafkaSession['retryInPlace'];
}

export class Transaction {
  #state: TransactionState = 'uninitialised';
  #lastEndMs: number | undefined;

  constructor(
    private readonly session: TransactionSession,
    /** Bounds the wait for a native call still pending before an abort. */
    private readonly apiTimeoutMs: number,
    private readonly clock: Pick<Clock, 'now'> = systemClock,
  ) {}

  /**
   * How long the latest commit or abort call to Kafka took, in-place retries included (undefined
   * before the first). A coordinator that moved while the call ran makes it last seconds.
   */
  get lastEndMs(): number | undefined {
    return this.#lastEndMs;
  }

  get state(): TransactionState {
    return this.#state;
  }

  /**
   * A transaction was begun and has not ended (committed, aborted or abandoned): the coordinator
   * may hold it, so a recovery must abort it and a new batch may join it.
   */
  get open(): boolean {
    return this.#state === 'open' || this.#state === 'committing' || this.#state === 'failed';
  }

  /** Whether `call` is legal now. */
  allows(call: TransactionCall): boolean {
    return TRANSACTION_TABLE[this.#state][call] !== undefined;
  }

  /** A transactional producer was created and initialised (at the start or by a recovery step). */
  producerReady(): void {
    this.#now('producer-ready');
  }

  /** The producer is closed or replaced: its open transaction dies with it, no abort call is made. */
  abandon(): void {
    this.#now('abandon');
  }

  begin(): Promise<void> {
    const s = this.session;
    return this.#call('begin', () =>
      s.retryInPlace('begin-transaction', () => s.producer.beginTransaction()),
    );
  }

  produce(record: OutgoingRecord): Promise<void> {
    return this.#call('produce', () => this.session.producer.produce(record));
  }

  sendOffsets(offsets: TopicPartitionOffset[]): Promise<void> {
    const s = this.session;
    return this.#call('send-offsets', () =>
      s.retryInPlace('send-offsets', () => s.producer.sendOffsets(offsets, s.consumer)),
    );
  }

  commit(): Promise<void> {
    const s = this.session;
    return this.#call('commit', () =>
      this.#timedEnd(() => s.retryInPlace('commit-transaction', () => s.producer.commitTransaction())),
    );
  }

  abort(): Promise<void> {
    const s = this.session;
    return this.#call('abort', async () => {
      // A commit whose JS guard gave up may still run in librdkafka: an abort now fails with
      // _CONFLICT (seen on shutdown, leaving the transaction open); wait for it, bounded.
      await s.producer.whenIdle?.(this.apiTimeoutMs);
      // An abort that conflicts with a commit librdkafka still runs is not retried in place
      // (planRecovery): it goes to the abort's failure plan at once. Only the abort itself is timed:
      // waiting for such a commit is no sign of a coordinator that moved.
      await this.#timedEnd(() => s.retryInPlace('abort-transaction', () => s.producer.abortTransaction()));
    });
  }

  async #timedEnd(end: () => Promise<void>): Promise<void> {
    const started = this.clock.now();
    try {
      await end();
    } finally {
      this.#lastEndMs = this.clock.now() - started;
    }
  }

  #guard(call: TransactionCall): Transition {
    const t = TRANSACTION_TABLE[this.#state][call];
    if (t === undefined) throw new IllegalTransactionCall(this.#state, call);
    return t;
  }

  #now(call: TransactionCall): void {
    this.#state = this.#guard(call).then;
  }

  async #call(call: TransactionCall, fn: () => Promise<void>): Promise<void> {
    const t = this.#guard(call);
    const before = this.#state;
    const during = t.during ?? before;
    this.#state = during;
    try {
      await fn();
    } catch (e) {
      // Abandoned meanwhile: the producer is gone, and with it whatever the call was doing.
      if (this.#state === during) this.#state = t.failed ?? before;
      throw e;
    }
    if (this.#state === during) this.#state = t.then;
  }
}
