import { silentLogger } from '../observability/logger.ts';
import { classifyKafkaError } from './classify.ts';
import { createAdmin, type AdminPort } from './admin.ts';
import { createConsumer, type ConsumerPort } from './consumer.ts';
import { tpKey, type FetchedRecord } from './records.ts';
import { isStrandedError } from './stranded-client.ts';

/** What the checking side needs of a consumer, and how often its client had to be replaced. */
export type RecordReader = Pick<
  ConsumerPort,
  'connect' | 'subscribe' | 'consume' | 'lag' | 'atEnd' | 'close'
> & {
  readonly replacements: number;
};

export interface ReaderOptions {
  bootstrap: string;
  clientId: string;
  groupId?: string;
  sessionTimeoutMs?: number;
  /**
   * Reads every partition by assignment instead of joining a group: no group coordinator is
   * involved, so a coordinator that moves or stops cannot stall the reader (it keeps reading from
   * each partition's leader). Partitions added later are found within {@link PARTITION_CHECK_MS}.
   */
  byAssignment?: boolean;
}

/** How often a reader by assignment looks for partitions added to its topics. */
const PARTITION_CHECK_MS = 5_000;

/**
 * A consumer that reads topics from the start with read_committed and never commits: the checking
 * side of exactly-once (verifier, tests, benchmarks). Its group is its own unless `groupId` is given,
 * so it never disturbs (or resumes from) anybody's offsets; `byAssignment` reads without a group.
 *
 * A reader rides through broker faults: a consume error other than a configuration error reads as
 * "nothing this time" (librdkafka recovers by itself). If its client is stranded
 * (stranded-client.ts) it replaces the client and drops what the new one reads again below the
 * positions already returned, so its callers see the same stream as from a reader never replaced.
 */
export function createReadCommittedReader(o: ReaderOptions): RecordReader {
  return new ReadCommittedReader(o);
}

class ReadCommittedReader implements RecordReader {
  replacements = 0;
  #consumer: ConsumerPort;
  #stranded = false;
  #topics: string[] = [];
  #connectTimeoutMs = 30_000;
  /** Next offset per partition (tpKey) already handed out. */
  readonly #next = new Map<string, number>();
  /** By assignment: the partitions assigned (tpKey), and when to look for new ones. */
  #assigned = new Set<string>();
  #checkAt = 0;
  #admin: AdminPort | undefined;

  constructor(private readonly o: ReaderOptions) {
    this.#consumer = this.#create();
  }

  #create(): ConsumerPort {
    this.#stranded = false;
    const o = this.o;
    return createConsumer(
      {
        bootstrapServers: o.bootstrap,
        clientId: o.clientId,
        groupId: o.groupId ?? `${o.clientId}-${process.pid}-${Math.random().toString(36).slice(2)}`,
        groupProtocol: 'classic',
        assignmentStrategy: 'range',
        sessionTimeoutMs: o.sessionTimeoutMs ?? 10_000,
        heartbeatIntervalMs: 1_000,
        maxPollIntervalMs: 300_000,
        isolation: 'read_committed',
        autoOffsetReset: 'earliest',
      },
      { onAssign: () => undefined, onRevoke: () => undefined, onLost: () => undefined },
      (err) => {
        if (isStrandedError(err)) this.#stranded = true;
      },
      silentLogger(),
    );
  }

  connect(timeoutMs: number): Promise<void> {
    this.#connectTimeoutMs = timeoutMs;
    return this.#consumer.connect(timeoutMs);
  }

  subscribe(topics: string[]): void {
    this.#topics = topics;
    if (!this.o.byAssignment) this.#consumer.subscribe(topics);
  }

  async consume(max: number, timeoutMs: number): Promise<FetchedRecord[]> {
    if (this.#stranded) await this.#replace();
    if (this.o.byAssignment && Date.now() >= this.#checkAt) await this.#assignNew();
    let records: FetchedRecord[];
    try {
      records = await this.#consumer.consume(max, timeoutMs);
    } catch (e) {
      const err = classifyKafkaError(e, 'consume');
      if (err.kind === 'config') throw err;
      await new Promise((r) => setTimeout(r, Math.min(timeoutMs, 200)));
      return [];
    }
    const fresh: FetchedRecord[] = [];
    for (const r of records) {
      const key = tpKey(r);
      if (r.offset < (this.#next.get(key) ?? 0)) continue;
      this.#next.set(key, r.offset + 1);
      fresh.push(r);
    }
    return fresh;
  }

  async #replace(): Promise<void> {
    this.replacements += 1;
    await this.#consumer.close(1_000);
    this.#consumer = this.#create();
    await this.#consumer.connect(this.#connectTimeoutMs);
    // By assignment, the next consume assigns the new client every partition again.
    if (this.o.byAssignment) {
      this.#assigned = new Set();
      this.#checkAt = 0;
    } else if (this.#topics.length > 0) this.#consumer.subscribe(this.#topics);
  }

  /** Assigns the partitions of the topics not assigned yet, each from the next offset not handed out. */
  async #assignNew(): Promise<void> {
    this.#checkAt = Date.now() + PARTITION_CHECK_MS;
    this.#admin ??= createAdmin(this.o.bootstrap, `${this.o.clientId}-metadata`);
    let counts: Map<string, number>;
    try {
      counts = await this.#admin.partitionCounts(this.#topics, 5_000);
    } catch {
      return; // Kafka unreachable for now: keep reading what is assigned, look again later.
    }
    const fresh = this.#topics
      .flatMap((topic) =>
        Array.from({ length: counts.get(topic) ?? 0 }, (_, partition) => ({ topic, partition })),
      )
      .filter((p) => !this.#assigned.has(tpKey(p)));
    if (fresh.length === 0) return;
    // Added to the assignment, not replacing it: a partition assigned again loses its fetch state
    // (its high watermark stayed unknown, so the reader never saw itself at the end).
    this.#consumer.assign(fresh.map((p) => ({ ...p, offset: this.#next.get(tpKey(p)) ?? -1 })));
    for (const p of fresh) this.#assigned.add(tpKey(p));
  }

  lag(): number | undefined {
    return this.#consumer.lag();
  }

  atEnd(): boolean {
    return this.#consumer.atEnd();
  }

  close(timeoutMs: number): Promise<void> {
    this.#admin?.close();
    return this.#consumer.close(timeoutMs);
  }
}
