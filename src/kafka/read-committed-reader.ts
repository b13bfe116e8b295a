import { silentLogger } from '../observability/logger.ts';
import { classifyKafkaError } from './classify.ts';
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
}

/**
 * A consumer that reads topics from the start with read_committed and never commits: the checking
 * side of exactly-once (verifier, tests, benchmarks). Its group is its own unless `groupId` is given,
 * so it never disturbs (or resumes from) anybody's offsets.
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
    this.#consumer.subscribe(topics);
  }

  async consume(max: number, timeoutMs: number): Promise<FetchedRecord[]> {
    if (this.#stranded) await this.#replace();
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
    if (this.#topics.length > 0) this.#consumer.subscribe(this.#topics);
  }

  lag(): number | undefined {
    return this.#consumer.lag();
  }

  atEnd(): boolean {
    return this.#consumer.atEnd();
  }

  close(timeoutMs: number): Promise<void> {
    return this.#consumer.close(timeoutMs);
  }
}
