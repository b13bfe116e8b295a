import { createReadCommittedReader, type RecordReader } from '../kafka/read-committed-reader.ts';
import type { FetchedRecord } from '../kafka/records.ts';
import { DLT_HEADERS } from '../runtime/index.ts';
import type { SeenRecord } from './check.ts';

const ATTEMPT_HEADER = 'attempt.';

export function toSeen(r: FetchedRecord): SeenRecord {
  const attempts = Object.entries(r.headers)
    .filter(([k]) => k.startsWith(ATTEMPT_HEADER))
    .map(([, v]) => v.toString());
  const errorKind = r.headers[DLT_HEADERS.errorKind]?.toString();
  return {
    partition: r.partition,
    offset: r.offset,
    key: r.key?.toString() ?? '',
    seq: Number(r.value?.toString()),
    attempts,
    ...(errorKind !== undefined ? { errorKind } : {}),
  };
}

function readCommittedConsumer(bootstrap: string, name: string): RecordReader {
  // By assignment: the faults move and stop group coordinators, and a reader in a group stalled
  // across such a move while the workers went on.
  return createReadCommittedReader({ bootstrap, clientId: name, byAssignment: true });
}

/**
 * A read_committed reader of the output topic that runs while the faults happen. Records are keyed
 * by position, so a replaced client's re-reads are not counted as duplicates (the same sequence at
 * two offsets is).
 */
export class ConcurrentReader {
  readonly records = new Map<string, SeenRecord>();
  #consumer: RecordReader | undefined;
  #stopped = false;
  #loop: Promise<void> | undefined;
  #failure: Error | undefined;

  constructor(
    private readonly bootstrap: string,
    private readonly topic: string,
  ) {}

  async start(): Promise<void> {
    this.#consumer = readCommittedConsumer(this.bootstrap, 'verify-concurrent-reader');
    await this.#consumer.connect(30_000);
    this.#consumer.subscribe([this.topic]);
    this.#loop = this.#run(this.#consumer);
  }

  /** Reads until `expected` distinct positions are in or the deadline passes. */
  async waitFor(expected: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.records.size >= expected) return true;
      await new Promise((r) => setTimeout(r, 250));
    }
    return this.records.size >= expected;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#loop;
    await this.#consumer?.close(10_000);
    if (this.#failure !== undefined) throw this.#failure;
  }

  /** The reader rides through broker faults by itself; only a configuration error ends it. */
  async #run(c: RecordReader): Promise<void> {
    try {
      while (!this.#stopped)
        for (const r of await c.consume(1_000, 200))
          this.records.set(`${r.partition}@${r.offset}`, toSeen(r));
    } catch (e) {
      this.#failure = e instanceof Error ? e : new Error(String(e));
    }
  }
}

export interface FinalRead {
  records: SeenRecord[];
  /**
   * Position lag of a read_committed consumer that read everything: 0 when it reached the high
   * watermark of every partition (LSO == HW: no transaction left open).
   */
  lagAtEnd: number | undefined;
  reachedEnd: boolean;
}

/**
 * Reads the topic from the start with read_committed until `expected` records are in and the
 * consumer's position reached the high watermark (nothing beyond an open transaction), or the
 * deadline. Keeps reading a little after that, so duplicates beyond `expected` show up.
 */
export async function readAllCommitted(
  bootstrap: string,
  topic: string,
  expected: number,
  timeoutMs: number,
): Promise<FinalRead> {
  const c = readCommittedConsumer(bootstrap, 'verify-final-reader');
  const byPos = new Map<string, SeenRecord>();
  await c.connect(30_000);
  c.subscribe([topic]);
  const deadline = Date.now() + timeoutMs;
  let settleUntil: number | undefined;
  let lag: number | undefined;
  let atEnd = false;
  try {
    while (Date.now() < deadline) {
      const batch = await c.consume(5_000, 200);
      for (const r of batch) byPos.set(`${r.partition}@${r.offset}`, toSeen(r));
      lag = c.lag();
      // Every partition, not only those that delivered something (the lag counts only those).
      atEnd = c.atEnd();
      if (byPos.size >= expected && atEnd) settleUntil ??= Date.now() + 2_000;
      if (settleUntil !== undefined && Date.now() > settleUntil) break;
    }
  } finally {
    await c.close(10_000);
  }
  return { records: [...byPos.values()], lagAtEnd: lag, reachedEnd: atEnd };
}
