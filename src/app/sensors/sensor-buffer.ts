/**
 * The bounded buffer between a live source and the Kafka producer, and its policy when Kafka is
 * slow or down (a socket cannot replay, so something has to give):
 *
 * 1. Below `capacity` lines, every line is taken.
 * 2. At `capacity` the buffer is full: the sink answers false and the source stops reading its
 *    sockets, so the sender's socket buffer fills and the sender waits or queues (back-pressure).
 *    Lines the source had already read in the same socket read still fit, up to `overflow` more.
 * 3. If the buffer is still full `maxPauseMs` later, the source reads again and every line offered
 *    until the buffer has drained to half is dropped and counted: a resolver must never be held up
 *    by its telemetry, and a drop counted here is visible, where one inside the resolver's own dnstap
 *    queue is not.
 * 4. Once drained to half the capacity, lines are taken again (and a paused source resumes).
 *
 * Pure state: the caller supplies the clock and acts on what `offer`, `tick` and `take` answer.
 */
export type BufferState = 'open' | 'paused' | 'dropping';

export interface BufferPolicy {
  readonly capacity: number;
  readonly maxPauseMs: number;
  /** Lines taken beyond capacity while paused (the rest of a socket read); default capacity/4, at least 2,048. */
  readonly overflow?: number;
}

export class SensorBuffer<T> {
  #in: T[] = [];
  #out: T[] = [];
  #outIndex = 0;
  #state: BufferState = 'open';
  #pausedAt = 0;
  readonly #overflow: number;
  dropped = 0;

  constructor(private readonly policy: BufferPolicy) {
    this.#overflow = policy.overflow ?? Math.max(2048, Math.floor(policy.capacity / 4));
  }

  get length(): number {
    return this.#in.length + this.#out.length - this.#outIndex;
  }

  get state(): BufferState {
    return this.#state;
  }

  /** 'taken', 'full' (taken, and the source should pause) or 'dropped' (counted). */
  offer(item: T, nowMs: number): 'taken' | 'full' | 'dropped' {
    const length = this.length;
    if (this.#state === 'dropping' || length >= this.policy.capacity + this.#overflow) {
      this.dropped += 1;
      return 'dropped';
    }
    this.#in.push(item);
    if (length + 1 < this.policy.capacity) return this.#state === 'paused' ? 'full' : 'taken';
    if (this.#state === 'open') {
      this.#state = 'paused';
      this.#pausedAt = nowMs;
    }
    return 'full';
  }

  /** True when the pause has lasted too long: the buffer now drops, and the source should read again. */
  tick(nowMs: number): boolean {
    if (this.#state !== 'paused' || nowMs - this.#pausedAt < this.policy.maxPauseMs) return false;
    this.#state = 'dropping';
    return true;
  }

  /** Up to `max` lines, oldest first; `reopened` when the buffer takes lines again (resume the source). */
  take(max: number): { items: T[]; reopened: boolean } {
    const items: T[] = [];
    while (items.length < max) {
      if (this.#outIndex >= this.#out.length) {
        if (this.#in.length === 0) break;
        this.#out = this.#in;
        this.#in = [];
        this.#outIndex = 0;
      }
      const end = Math.min(this.#out.length, this.#outIndex + max - items.length);
      for (let i = this.#outIndex; i < end; i += 1) items.push(this.#out[i] as T);
      this.#outIndex = end;
    }
    let reopened = false;
    if (this.#state !== 'open' && this.length <= this.policy.capacity / 2) {
      reopened = this.#state === 'paused' || this.#state === 'dropping';
      this.#state = 'open';
    }
    return { items, reopened };
  }
}
