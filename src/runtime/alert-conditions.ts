import type { Clock } from './clock.ts';

/**
 * The operational alert conditions of docs/recovery.md: four about the worker's own progress, a
 * partition of a subscribed topic that no member of the group owns for longer than `unownedMs` (new
 * partitions nobody picked up, a stuck rebalance), and records fetched below the worker's own commit
 * within the window (the client moved its position back; the records are dropped, but a position
 * that should not move did).
 */
export const ALERT_CONDITIONS = [
  'max_poll_exceeded_or_unknown_member',
  'repeated_recovery_after_revoke',
  'aborts_while_lag_grows',
  'no_commit_while_input_arrives',
  'partition_unowned',
  'records_below_commit',
] as const;

export type AlertCondition = (typeof ALERT_CONDITIONS)[number];

export interface AlertOptions {
  /** How far back events count. */
  windowMs: number;
  /** Recoveries after a revoke/lost within the window that count as "repeated". */
  repeatedRecoveries: number;
  /** How long without a commit, while input arrives, before alerting. */
  stallMs: number;
  /** How long a partition of a subscribed topic may stay without an owner. Default 30 s. */
  unownedMs?: number;
}

export const defaultAlertOptions: AlertOptions = {
  windowMs: 5 * 60_000,
  repeatedRecoveries: 3,
  stallMs: 60_000,
  unownedMs: 30_000,
};

/**
 * Computes the alert conditions from events the worker reports. Pure bookkeeping over an injected
 * clock; the worker exposes the result as metrics and in its health detail.
 */
export class AlertConditions {
  #membershipErrors: number[] = [];
  #lastRevokeOrLost: number | undefined;
  #recoveriesSinceRevoke: number[] = [];
  #aborts: number[] = [];
  #belowCommit: number[] = [];
  #lagSamples: { at: number; lag: number }[] = [];
  #lastCommitAt: number;
  #consumedSinceCommit = 0;
  /** `tpKey` -> when it was first seen without an owner (consecutive observations). */
  #unownedSince = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly opts: AlertOptions = defaultAlertOptions,
  ) {
    this.#lastCommitAt = clock.now();
  }

  membershipError(): void {
    this.#membershipErrors.push(this.clock.now());
  }
  revokedOrLost(): void {
    this.#lastRevokeOrLost = this.clock.now();
    this.#recoveriesSinceRevoke = [];
  }
  recovery(): void {
    if (this.#lastRevokeOrLost !== undefined) this.#recoveriesSinceRevoke.push(this.clock.now());
  }
  aborted(): void {
    this.#aborts.push(this.clock.now());
  }
  belowCommit(): void {
    this.#belowCommit.push(this.clock.now());
  }
  consumed(n: number): void {
    this.#consumedSinceCommit += n;
  }
  committed(): void {
    this.#lastCommitAt = this.clock.now();
    this.#consumedSinceCommit = 0;
  }
  lag(lag: number): void {
    this.#lagSamples.push({ at: this.clock.now(), lag });
  }
  /**
   * One observation of the group's coverage: every partition of the subscribed topics (from
   * metadata) and the partitions some member owns (from the group's assignment), as `tpKey`s.
   */
  coverage(expected: readonly string[], owned: readonly string[]): void {
    const now = this.clock.now();
    const ownedSet = new Set(owned);
    this.#unownedSince = new Map(
      expected.filter((tp) => !ownedSet.has(tp)).map((tp) => [tp, this.#unownedSince.get(tp) ?? now]),
    );
  }
  /** Partitions without an owner for longer than the bound, for the health detail. */
  unowned(): string[] {
    const bound = this.opts.unownedMs ?? defaultAlertOptions.unownedMs!;
    const now = this.clock.now();
    return [...this.#unownedSince].filter(([, since]) => now - since >= bound).map(([tp]) => tp);
  }

  /** The conditions that hold now. */
  active(): AlertCondition[] {
    const now = this.clock.now();
    const since = now - this.opts.windowMs;
    const recent = (xs: number[]) => xs.filter((t) => t >= since);
    this.#membershipErrors = recent(this.#membershipErrors);
    this.#aborts = recent(this.#aborts);
    this.#belowCommit = recent(this.#belowCommit);
    this.#recoveriesSinceRevoke = recent(this.#recoveriesSinceRevoke);
    this.#lagSamples = this.#lagSamples.filter((s) => s.at >= since);

    const out: AlertCondition[] = [];
    if (this.#membershipErrors.length > 0) out.push('max_poll_exceeded_or_unknown_member');
    if (this.#recoveriesSinceRevoke.length >= this.opts.repeatedRecoveries)
      out.push('repeated_recovery_after_revoke');
    const first = this.#lagSamples[0];
    const last = this.#lagSamples[this.#lagSamples.length - 1];
    if (this.#aborts.length > 0 && first && last && last.lag > first.lag) out.push('aborts_while_lag_grows');
    if (this.#consumedSinceCommit > 0 && now - this.#lastCommitAt >= this.opts.stallMs) {
      out.push('no_commit_while_input_arrives');
    }
    if (this.unowned().length > 0) out.push('partition_unowned');
    if (this.#belowCommit.length > 0) out.push('records_below_commit');
    return out;
  }
}
