/**
 * Warnings per host over an event-time window: the decision of when a host is alerted, as a pure
 * function of its warnings (no Kafka, no clock of its own), so the detector stage and an offline
 * evaluation share it.
 *
 * Semantics. Event time is the line's own timestamp. Windows of `windowMs` are aligned to epoch
 * multiples of it (window j = [j*W, (j+1)*W)) and give every alert its identity (host, j). Window j
 * fires when a warning in it starts a sliding span of W (which may reach into window j+1) holding
 * at least `minWarnings` distinct names. Why both:
 * - The sliding span catches every burst of at most W, also one that straddles a boundary (plain
 *   tumbling windows split it; hopping windows by W/2 guarantee only W/2 and alert every burst twice,
 *   since each instant lies in two of them).
 * - The aligned identity makes the decision independent of arrival: whether window j fires is a
 *   monotone function of the set of warnings in [j*W, (j+2)*W) (a new warning can only add names to
 *   spans), and its identity does not depend on which warning came first. So any batching, any
 *   speed and any order of the lines within the lateness give the same alerts with the same ids.
 *   (Sliding windows anchored on "the first warning" would move their anchor when an earlier
 *   warning arrives late.)
 * Distinct names, because a DGA resolves many different names while a benign host that repeats one
 * mistyped or stale name is not a burst. A second, optional rule (`weak`) fires on many more names
 * at a lower score: a family whose names look less random than the model's threshold still
 * resolves dozens of them in a window, which no benign host's failed lookups come near. Either rule
 * fires a window. A third (`spread`) counts names per group, the domain they sit under: a family
 * that puts its random labels under a few fixed domains (domain shadowing: fresh subdomains of
 * hijacked legitimate domains) makes names that look like a service's ids one at a time, but few
 * benign hosts fail to resolve dozens of different names under one domain in minutes, and the
 * group function leaves out the domains where they do by design. Every rule is monotone in the
 * window's warnings, so the argument above holds for them together. A burst within W that crosses
 * a boundary fires in the window before it, and in the window after it too when its part after the
 * boundary alone holds `minWarnings` names: a second alert with an id of its own, never a repeat
 * of one.
 *
 * At most once per (host, window): the fired windows are part of the state; later warnings of a
 * fired window join nothing. The alert carries every warning of the window known when it fires:
 * those from the window's start to W after its last warning (every span anchored in it).
 *
 * Expiry on event time: each host's own watermark is its newest line's time minus `latenessMs` (per
 * host, not per partition, so a quiet or slower subnet sharing the partition does not make this
 * host's lines late). A warning older than the watermark its earlier lines set is late and ignored;
 * window j is final once the watermark reaches (j+2)*W, and its warnings and fired mark are dropped.
 * A host without lines for `idleTimeoutMs` of wall-clock time is dropped by {@link expireIdle}.
 */

/** One scored line of a host, as the window logic needs it; `payload` travels into alerts. */
export interface WindowLine<P = unknown> {
  readonly host: string;
  /** Identifies the line (logline_id): a line seen twice counts once. */
  readonly id: string;
  /** The queried name; compared case-insensitively, without a trailing dot. */
  readonly name: string | undefined;
  /** Event time, ms since the epoch. */
  readonly atMs: number;
  readonly score: number;
  readonly payload: P;
}

/** A warning as a host's state keeps it. */
export interface StoredWarning<P = unknown> {
  readonly id: string;
  /** Normalised name. */
  readonly name: string;
  readonly atMs: number;
  readonly score: number;
  readonly payload: P;
}

/** One host's windows: its warnings of windows not yet final, and the windows that fired. */
export interface HostWindows<P = unknown> {
  /** Sorted by event time, then id. */
  readonly warnings: readonly StoredWarning<P>[];
  /** Window numbers (j) that raised their alert, ascending. */
  readonly fired: readonly number[];
  /** Event time of the host's newest line. */
  readonly maxAtMs: number;
  /** Wall-clock time of the host's last line (idle expiry). */
  readonly seenMs: number;
}

/** "At least `minWarnings` distinct names scoring at least `threshold` in a span of the window." */
export interface WarningRule {
  readonly threshold: number;
  readonly minWarnings: number;
  /**
   * When given, the names are counted per group (e.g. the domain they sit under) and one group
   * must hold `minWarnings` of them; a warning it maps to undefined never counts. Must be a pure
   * function of the warning's name and payload, so the rule stays monotone in the window's warnings.
   */
  readonly groupOf?: ((name: string, payload: unknown) => string | undefined) | undefined;
}

export interface WindowSettings extends WarningRule {
  readonly windowMs: number;
  readonly latenessMs: number;
  /** A second rule, with a lower threshold and more names; a window fires when either holds. */
  readonly weak?: WarningRule | undefined;
  /** A third rule, counting names per group (`groupOf`); a window fires when any rule holds. */
  readonly spread?: WarningRule | undefined;
}

/** An alert to raise: window `window` of `host` met a rule of its settings. */
export interface WindowAlert<P = unknown> {
  readonly host: string;
  /** j: the window is [j * windowMs, (j + 1) * windowMs) of event time. */
  readonly window: number;
  readonly startMs: number;
  readonly endMs: number;
  /** Every warning of the window known when it fired, in event-time order. */
  readonly warnings: readonly StoredWarning<P>[];
  /** The group whose names fired it, when only a grouping rule (`spread`) did. */
  readonly group?: string;
}

export interface WindowStep<P> {
  /** New state per host this step touched; undefined: the host has nothing left to keep. */
  readonly hosts: ReadonlyMap<string, HostWindows<P> | undefined>;
  /** Alerts to raise now, by window, then host. */
  readonly alerts: readonly WindowAlert<P>[];
  /** Warnings ignored because every window they could join was final (beyond the lateness). */
  readonly late: readonly WindowLine<P>[];
}

/** The name as compared: DNS names are case-insensitive, and `a.com.` is `a.com`. */
export function normalizeName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/**
 * Adds scored lines (of any hosts, any order) to the hosts' windows and says which windows fire.
 * `stateOf` gives a host's previous state; `nowMs` is the wall clock, kept for idle expiry only.
 */
export function advanceWindows<P>(
  stateOf: (host: string) => HostWindows<P> | undefined,
  lines: readonly WindowLine<P>[],
  settings: WindowSettings,
  nowMs: number,
): WindowStep<P> {
  const byHost = new Map<string, WindowLine<P>[]>();
  for (const line of lines) {
    const list = byHost.get(line.host);
    if (list) list.push(line);
    else byHost.set(line.host, [line]);
  }
  const hosts = new Map<string, HostWindows<P> | undefined>();
  const alerts: WindowAlert<P>[] = [];
  const late: WindowLine<P>[] = [];
  for (const [host, hostLines] of byHost) {
    const step = advanceHost(host, stateOf(host), hostLines, settings, nowMs);
    hosts.set(host, step.next);
    alerts.push(...step.alerts);
    late.push(...step.late);
  }
  alerts.sort((a, b) => a.window - b.window || compare(a.host, b.host));
  return { hosts, alerts, late };
}

/** One host's step of {@link advanceWindows}. */
export function advanceHost<P>(
  host: string,
  previous: HostWindows<P> | undefined,
  lines: readonly WindowLine<P>[],
  settings: WindowSettings,
  nowMs: number,
): { next: HostWindows<P> | undefined; alerts: WindowAlert<P>[]; late: WindowLine<P>[] } {
  const W = settings.windowMs;
  const windowOf = (atMs: number) => Math.floor(atMs / W);
  const rules = [settings, settings.weak, settings.spread].filter((r): r is WarningRule => r !== undefined);
  // The watermark a line is judged by comes from the lines before it (in the order they arrived,
  // which a batch keeps): within the lateness a line is never late, however many later lines share
  // its batch, so one large batch and many small ones accept the same warnings.
  let maxAtMs = previous?.maxAtMs ?? -Infinity;
  const known = new Set(previous?.warnings.map((w) => w.id));
  const warnings = previous ? [...previous.warnings] : [];
  const late: WindowLine<P>[] = [];
  for (const line of lines) {
    if (!Number.isFinite(line.atMs)) continue;
    const watermark = maxAtMs - settings.latenessMs;
    maxAtMs = Math.max(maxAtMs, line.atMs);
    if (line.name === undefined || known.has(line.id) || !rules.some((r) => counts(r, line))) continue;
    if (line.atMs < watermark) {
      late.push(line);
      continue;
    }
    known.add(line.id);
    warnings.push({
      id: line.id,
      name: normalizeName(line.name),
      atMs: line.atMs,
      score: line.score,
      payload: line.payload,
    });
  }
  warnings.sort((a, b) => a.atMs - b.atMs || compare(a.id, b.id));
  // Window j takes no line on time once the watermark reaches (j + 2) * W (a span anchored in it
  // ends before that): it is final, and its warnings and fired mark can go.
  const watermark = maxAtMs - settings.latenessMs;
  const isFinal = (j: number) => watermark >= (j + 2) * W;

  const fired = new Set(previous?.fired ?? []);
  const alerts: WindowAlert<P>[] = [];
  for (const j of new Set(warnings.map((w) => windowOf(w.atMs)))) {
    if (fired.has(j)) continue;
    let group: string | undefined;
    for (const rule of rules) {
      group = firingGroup(warnings, j, rule, W);
      if (group !== undefined) break;
    }
    if (group === undefined) continue;
    fired.add(j);
    alerts.push({
      host,
      window: j,
      startMs: j * W,
      endMs: (j + 1) * W,
      warnings: windowWarnings(warnings, j, W),
      ...(group !== UNGROUPED && { group }),
    });
  }

  const kept = warnings.filter((w) => !isFinal(windowOf(w.atMs)));
  const keptFired = [...fired].filter((j) => !isFinal(j)).sort((a, b) => a - b);
  const next =
    kept.length === 0 && keptFired.length === 0
      ? undefined
      : { warnings: kept, fired: keptFired, maxAtMs, seenMs: nowMs };
  return { next, alerts, late };
}

/** The group of a rule that does not group: every counted name is in it. */
const UNGROUPED = '';

/** Whether a line can count towards a rule: its score reaches the threshold, and it has a group. */
function counts(
  rule: WarningRule,
  line: { name: string | undefined; score: number; payload: unknown },
): boolean {
  if (line.score < rule.threshold || line.name === undefined) return false;
  return rule.groupOf === undefined || rule.groupOf(normalizeName(line.name), line.payload) !== undefined;
}

/**
 * Whether a warning of window j (scoring at least the rule's threshold) starts a span of W with at
 * least the rule's `minWarnings` distinct names at that score, in the anchor's group for a grouping
 * rule: that group ({@link UNGROUPED} for a rule without one), or undefined when the rule does not fire.
 */
function firingGroup(
  sorted: readonly StoredWarning[],
  j: number,
  rule: WarningRule,
  W: number,
): string | undefined {
  const groupOf = rule.groupOf;
  const groups = new Map<StoredWarning, string | undefined>();
  const group = (w: StoredWarning): string | undefined => {
    if (w.score < rule.threshold) return undefined;
    if (groupOf === undefined) return UNGROUPED;
    if (!groups.has(w)) groups.set(w, groupOf(w.name, w.payload));
    return groups.get(w);
  };
  for (let i = 0; i < sorted.length; i += 1) {
    const anchor = sorted[i]!;
    const g = Math.floor(anchor.atMs / W) === j ? group(anchor) : undefined;
    if (g === undefined) continue;
    const names = new Set<string>();
    for (let k = i; k < sorted.length && sorted[k]!.atMs < anchor.atMs + W; k += 1) {
      if (group(sorted[k]!) !== g) continue;
      names.add(sorted[k]!.name);
      if (names.size >= rule.minWarnings) return g;
    }
  }
  return undefined;
}

/** The warnings of window j: from its start to W after its last warning. */
function windowWarnings<P>(sorted: readonly StoredWarning<P>[], j: number, W: number): StoredWarning<P>[] {
  let last = -Infinity;
  for (const w of sorted) if (Math.floor(w.atMs / W) === j) last = w.atMs;
  return sorted.filter((w) => w.atMs >= j * W && w.atMs < last + W);
}

/** Whether a host's state has been idle (no line) for longer than `idleTimeoutMs` of wall-clock time. */
export function expireIdle(state: HostWindows, nowMs: number, idleTimeoutMs: number): boolean {
  return nowMs - state.seenMs > idleTimeoutMs;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
