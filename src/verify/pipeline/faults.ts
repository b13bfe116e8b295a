import { mulberry32 } from '../random.ts';

/** The faults a pipeline run injects. */
export const FAULT_KINDS = [
  'stage-kill-9',
  'stage-sigstop',
  'agent-kill-9',
  'broker-kill-9',
  'clickhouse-kill-9',
  'network-cut',
] as const;
export type PipelineFaultKind = (typeof FAULT_KINDS)[number];

export interface PlannedFault {
  readonly kind: PipelineFaultKind;
  /** A process label (`collector dga_collector`, `agent`), `broker 1` or `clickhouse`. */
  readonly target: string;
  /** When, after the feed began (ms). */
  readonly atMs: number;
}

/** A fault as it happened: when, how long its action took, and what went wrong doing it. */
export interface InjectedFault extends PlannedFault {
  /** When it really began, after the feed began (ms): later than planned when the one before took long. */
  readonly atActualMs: number;
  readonly injectedAt: number;
  readonly restoredAt: number;
  readonly error?: string;
}

/**
 * The stage whose link to the broker a seed cuts: it runs in a network namespace of its own for the
 * whole run, so it must be known before the processes start. A dice of its own, so that the rest of
 * a seed's schedule is the same with or without a namespace.
 */
export function networkCutTarget(seed: number, stages: readonly string[]): string | undefined {
  const random = mulberry32(seed * 7_919 + 29);
  return stages[Math.floor(random() * stages.length)];
}

/**
 * The fault schedule of a seed: a kill -9 of every stage process (with `oneStageKill`, of one stage
 * the seed picks: every kind once, for a short run) and of the monitoring agent, one stage stopped
 * (SIGSTOP) past its session timeout, a broker kill -9, a ClickHouse kill -9 and, when `cutTarget`
 * names a stage that runs in a network namespace, a cut of that stage's link, in an order the seed
 * shuffles, spread evenly over `spreadMs` (the feed's duration) so each meets traffic.
 */
export function faultSchedule(
  seed: number,
  stages: readonly string[],
  spreadMs: number,
  cutTarget?: string,
  oneStageKill = false,
): PlannedFault[] {
  const random = mulberry32(seed * 104_729 + 17);
  const stalled = stages[Math.floor(random() * stages.length)] ?? 'logserver';
  // A dice of its own, so that the rest of a seed's schedule is the same in both forms.
  const killed = stages[Math.floor(mulberry32(seed * 7_919 + 31)() * stages.length)] ?? 'logserver';
  const faults: Omit<PlannedFault, 'atMs'>[] = [
    ...(cutTarget === undefined ? [] : [{ kind: 'network-cut' as const, target: cutTarget }]),
    ...(oneStageKill ? [killed] : stages).map((target) => ({ kind: 'stage-kill-9' as const, target })),
    { kind: 'stage-sigstop', target: stalled },
    { kind: 'agent-kill-9', target: 'agent' },
    { kind: 'broker-kill-9', target: 'broker 1' },
    { kind: 'clickhouse-kill-9', target: 'clickhouse' },
  ];
  // Fisher-Yates with the seed's dice: each seed meets the faults in an order of its own.
  for (let i = faults.length - 1; i > 0; i -= 1) {
    const j = Math.floor(random() * (i + 1));
    [faults[i], faults[j]] = [faults[j] as (typeof faults)[number], faults[i] as (typeof faults)[number]];
  }
  const step = spreadMs / (faults.length + 1);
  return faults.map((f, i) => ({ ...f, atMs: Math.round(step * (i + 1)) }));
}
