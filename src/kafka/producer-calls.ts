import { classifyKafkaError } from './classify.ts';
import { code } from './error-codes.ts';
import type { KafkaError, KafkaOperation } from './kafka-error.ts';
import { strandedError } from './stranded-client.ts';

/**
 * A producer's native callback calls, each a promise that cannot hang: settled by its callback,
 * or at once once the client is found stranded (the call could only time out), or by a JS guard.
 * Counts the transactional calls whose callback has not come yet: librdkafka can block forever
 * inside one (seen: send_offsets_to_transaction after a long broker SIGSTOP), and disconnecting
 * then deadlocks against it, so such a producer is abandoned instead of closed.
 */
export class NativeCalls {
  /** Transactional calls whose callback has not come yet. */
  pending = 0;
  /** Set when the client has forgotten every broker: its calls fail at once instead of timing out. */
  #stranded: KafkaError | undefined;
  /** Settles each call still waiting for its callback. */
  readonly #waiting = new Set<(err: unknown) => void>();
  /** Told once when no transactional call is pending any more. */
  #onIdle: (() => void) | undefined;

  constructor(private readonly apiTimeoutMs: number) {}

  /** Fails every waiting call and every later one with `err`. */
  strand(err: KafkaError): void {
    this.#stranded = err;
    for (const finish of [...this.#waiting]) finish(err);
  }

  /** A native call's promise; `guardMs`, if given, bounds the wait for its callback. */
  settled(
    op: KafkaOperation,
    start: (finish: (err: unknown) => void) => void,
    guardMs?: number,
  ): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.#stranded) return reject(strandedError(op));
      let done = false;
      const finish = (err: unknown) => {
        if (done) return;
        done = true;
        clearTimeout(guard);
        this.#waiting.delete(finish);
        if (err) reject(classifyKafkaError(err, op));
        else resolve();
      };
      const timedOut = { code: code('_TIMED_OUT'), message: `${op} gave no answer`, isRetriable: true };
      const guard = guardMs === undefined ? undefined : setTimeout(() => finish(timedOut), guardMs);
      this.#waiting.add(finish);
      start(finish);
    });
  }

  /** Runs a native transactional call bounded by apiTimeoutMs, on both sides of the binding. */
  bounded(op: KafkaOperation, fn: (timeoutMs: number, cb: (err: unknown) => void) => void): Promise<void> {
    return this.settled(
      op,
      (finish) => {
        this.pending += 1;
        fn(this.apiTimeoutMs, (err) => {
          this.pending -= 1;
          finish(err);
          if (this.pending === 0) this.#idle();
        });
      },
      this.apiTimeoutMs + 2_000,
    );
  }

  /** Calls `cb` once no transactional call is pending (at once if none is). */
  onIdle(cb: () => void): void {
    this.#onIdle = cb;
    if (this.pending === 0) this.#idle();
  }

  #idle(): void {
    const cb = this.#onIdle;
    this.#onIdle = undefined;
    cb?.();
  }

  /** Resolves true once no transactional call is pending, false when one still is after `timeoutMs`. */
  async whenIdle(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.pending > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return this.pending === 0;
  }
}
