/**
 * Queries waiting for their response, so a response observation carries the query's time and size
 * where the server sends both. Bounded: at `capacity` the oldest waiting query is evicted (counted),
 * and a query older than `timeoutMs` is expired (counted) when the table is next touched. Keys are
 * the transaction's identity as both messages carry it: client address and port, DNS id, name, type.
 * Insertion order is arrival order, so the oldest entries are always first in the Map.
 */
export interface PairingCounters {
  paired: number;
  /** Responses with no waiting query (the query came before the sensor started, or was evicted). */
  unpaired: number;
  /** Queries whose response never came within the timeout. */
  expired: number;
  /** Queries pushed out because the table was full. */
  evicted: number;
}

export interface WaitingQuery {
  readonly timeMicros?: number;
  readonly size: number;
}

interface Entry extends WaitingQuery {
  readonly at: number;
}

export class PairingTable {
  readonly #entries = new Map<string, Entry>();
  readonly counters: PairingCounters = { paired: 0, unpaired: 0, expired: 0, evicted: 0 };

  constructor(
    readonly capacity: number,
    readonly timeoutMs: number,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  add(key: string, query: WaitingQuery, nowMs: number): void {
    this.expire(nowMs);
    // A retransmitted query (same key) replaces the first: the response answers the latest.
    this.#entries.delete(key);
    if (this.#entries.size >= this.capacity) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) {
        this.#entries.delete(oldest.value);
        this.counters.evicted += 1;
      }
    }
    this.#entries.set(key, { ...query, at: nowMs });
  }

  take(key: string, nowMs: number): WaitingQuery | undefined {
    this.expire(nowMs);
    const entry = this.#entries.get(key);
    if (entry === undefined) {
      this.counters.unpaired += 1;
      return undefined;
    }
    this.#entries.delete(key);
    this.counters.paired += 1;
    return entry;
  }

  /** Drops queries older than the timeout. */
  expire(nowMs: number): void {
    for (const [key, entry] of this.#entries) {
      if (nowMs - entry.at < this.timeoutMs) break;
      this.#entries.delete(key);
      this.counters.expired += 1;
    }
  }
}
