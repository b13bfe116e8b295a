/**
 * The exactly-once verdict over what a read_committed reader saw. Pure: no Kafka here, so the
 * rules are unit-testable. Input records carry the seeded sequence number as value, the key
 * `k-<seq % keys>`, and one `attempt.<stage>` header per stage naming the process() call (the
 * transaction attempt) that produced them.
 */

/** One output record as the checker needs it. */
export interface SeenRecord {
  partition: number;
  offset: number;
  key: string;
  seq: number;
  /** Attempt ids from the `attempt.*` headers (one per stage the record passed). */
  attempts: string[];
  /** A dead letter's `error.kind` header (absent on outputs). */
  errorKind?: string;
}

export interface OutputVerdict {
  expected: number;
  /** Distinct records read (positions), after dropping re-reads of the same partition+offset. */
  received: number;
  duplicates: number;
  lost: number;
  /** Records whose sequence is lower than an earlier record of the same key (or partition). */
  reordered: number;
  /** Records produced by an attempt that a worker reported as aborted. */
  abortedVisible: number;
  /** Sequence numbers outside 0..expected-1 (foreign records), or dead-lettered ones in the output. */
  unexpected: number;
  /** A few examples of each problem, for the report. */
  samples: { duplicates: number[]; lost: number[]; reordered: number[]; abortedVisible: string[] };
}

const SAMPLE = 10;

/**
 * How `count` (copies seen per sequence) falls short of exactly one copy of each `wanted` sequence:
 * the sequences never seen, the extra copies, and a few examples of each.
 */
function tallyOnce(wanted: Iterable<number>, count: ReadonlyMap<number, number>) {
  const tally = {
    missing: 0,
    duplicates: 0,
    missingSamples: [] as number[],
    duplicateSamples: [] as number[],
  };
  for (const seq of wanted) {
    const c = count.get(seq) ?? 0;
    if (c === 0) {
      tally.missing += 1;
      if (tally.missingSamples.length < SAMPLE) tally.missingSamples.push(seq);
    } else if (c > 1) {
      tally.duplicates += c - 1;
      if (tally.duplicateSamples.length < SAMPLE) tally.duplicateSamples.push(seq);
    }
  }
  return tally;
}

/**
 * Checks the output of a pass-through (or chain) run over seeds 0..expected-1, less the `deadLettered`
 * ones (which must not be output at all). A re-read of the same partition+offset (a reader that
 * rebalanced) is not a duplicate; the same sequence at two offsets is.
 */
export function checkOutput(
  records: Iterable<SeenRecord>,
  expected: number,
  abortedAttempts: ReadonlySet<string> = new Set(),
  deadLettered: ReadonlySet<number> = new Set(),
): OutputVerdict {
  const positions = new Set<string>();
  const count = new Map<number, number>();
  const lastPerKey = new Map<string, number>();
  const lastPerPartition = new Map<number, number>();
  const samples: OutputVerdict['samples'] = { duplicates: [], lost: [], reordered: [], abortedVisible: [] };
  let received = 0;
  let reordered = 0;
  let abortedVisible = 0;
  let unexpected = 0;
  const ordered = [...records].sort((a, b) => a.partition - b.partition || a.offset - b.offset);
  for (const r of ordered) {
    const pos = `${r.partition}@${r.offset}`;
    if (positions.has(pos)) continue;
    positions.add(pos);
    received += 1;
    if (!Number.isInteger(r.seq) || r.seq < 0 || r.seq >= expected || deadLettered.has(r.seq))
      unexpected += 1;
    const seen = count.get(r.seq) ?? 0;
    count.set(r.seq, seen + 1);
    const bad = r.attempts.find((a) => abortedAttempts.has(a));
    if (bad !== undefined) {
      abortedVisible += 1;
      if (samples.abortedVisible.length < SAMPLE) samples.abortedVisible.push(`${r.seq}:${bad}`);
    }
    // Order counts first occurrences only: a duplicate is already counted as such.
    if (seen > 0) continue;
    const prevKey = lastPerKey.get(r.key);
    const prevPart = lastPerPartition.get(r.partition);
    if ((prevKey !== undefined && r.seq < prevKey) || (prevPart !== undefined && r.seq < prevPart)) {
      reordered += 1;
      if (samples.reordered.length < SAMPLE) samples.reordered.push(r.seq);
    }
    lastPerKey.set(r.key, Math.max(prevKey ?? -1, r.seq));
    lastPerPartition.set(r.partition, Math.max(prevPart ?? -1, r.seq));
  }
  const wanted = Array.from({ length: expected }, (_, i) => i).filter((i) => !deadLettered.has(i));
  const once = tallyOnce(wanted, count);
  samples.lost = once.missingSamples;
  samples.duplicates = once.duplicateSamples;
  const { duplicates, missing: lost } = once;
  return { expected, received, duplicates, lost, reordered, abortedVisible, unexpected, samples };
}

/** True when the verdict shows no violation. */
export function isExactlyOnce(v: OutputVerdict): boolean {
  return (
    v.duplicates === 0 && v.lost === 0 && v.reordered === 0 && v.abortedVisible === 0 && v.unexpected === 0
  );
}

/** What the dead-letter topic of a run held against the poison records it should hold. */
export interface DeadLetterVerdict {
  expected: number;
  /** Distinct dead letters read (positions). */
  received: number;
  /** Poison sequences dead-lettered more than once (extra copies). */
  duplicates: number;
  /** Poison sequences not dead-lettered. */
  missing: number;
  /** Dead letters of records that are not poison (they were lost from the output instead). */
  foreign: number;
  /** Dead letters whose `error.kind` is not `refused`. */
  wrongKind: number;
  samples: { duplicates: number[]; missing: number[]; foreign: number[]; wrongKind: string[] };
}

/** Checks that each of `poison` is dead-lettered exactly once, for a refusal, and nothing else is. */
export function checkDeadLetters(
  records: Iterable<SeenRecord>,
  poison: ReadonlySet<number>,
): DeadLetterVerdict {
  const byPosition = new Map<string, SeenRecord>();
  for (const r of records) byPosition.set(`${r.partition}@${r.offset}`, r);
  const count = new Map<number, number>();
  const samples: DeadLetterVerdict['samples'] = { duplicates: [], missing: [], foreign: [], wrongKind: [] };
  let foreign = 0;
  let wrongKind = 0;
  for (const r of byPosition.values()) {
    count.set(r.seq, (count.get(r.seq) ?? 0) + 1);
    if (!poison.has(r.seq)) {
      foreign += 1;
      if (samples.foreign.length < SAMPLE) samples.foreign.push(r.seq);
    }
    if (r.errorKind !== 'refused') {
      wrongKind += 1;
      if (samples.wrongKind.length < SAMPLE) samples.wrongKind.push(`${r.seq}:${r.errorKind ?? 'none'}`);
    }
  }
  const once = tallyOnce(poison, count);
  samples.missing = once.missingSamples;
  samples.duplicates = once.duplicateSamples;
  const { duplicates, missing } = once;
  return {
    expected: poison.size,
    received: byPosition.size,
    duplicates,
    missing,
    foreign,
    wrongKind,
    samples,
  };
}

/** True when every poison record was dead-lettered once, for its refusal, and nothing else was. */
export function deadLettersHold(v: DeadLetterVerdict): boolean {
  return v.duplicates === 0 && v.missing === 0 && v.foreign === 0 && v.wrongKind === 0;
}
