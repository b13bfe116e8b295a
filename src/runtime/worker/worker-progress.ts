/**
 * What the status reports of the loop's progress: when it last turned (liveness), when it last
 * committed and how many transactions it committed.
 */
export class WorkerProgress {
  #lastLoopAt: number;
  #lastCommitAt: number | undefined;
  #commits = 0;

  constructor(now: number) {
    this.#lastLoopAt = now;
  }

  get lastLoopAt(): number {
    return this.#lastLoopAt;
  }

  get lastCommitAt(): number | undefined {
    return this.#lastCommitAt;
  }

  get commits(): number {
    return this.#commits;
  }

  /** The loop turned, or the worker is visibly busy on its behalf (keep-alive polls, reconnect attempts). */
  looped(now: number): void {
    this.#lastLoopAt = now;
  }

  committed(now: number): void {
    this.#commits += 1;
    this.#lastCommitAt = now;
  }
}

/**
 * The stage call under way (a batch or a timer), if any: a rebalance, a consumer error or a stop
 * aborts its signal, telling it that its work is stale.
 */
export class InFlight {
  #current: AbortController | undefined;

  begin(): AbortController {
    const controller = new AbortController();
    this.#current = controller;
    return controller;
  }

  end(): void {
    this.#current = undefined;
  }

  abort(reason: Error): void {
    this.#current?.abort(reason);
  }
}
