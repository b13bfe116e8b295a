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
  /** Sequence numbers outside 0..expected-1 (foreign records). */
  unexpected: number;
  /** A few examples of each problem, for the report. */
  samples: { duplicates: number[]; lost: number[]; reordered: number[]; abortedVisible: string[] };
}

const SAMPLE = 10;

/**
 * Checks the output of a pass-through (or chain) run over seeds 0..expected-1. A re-read of the
 * same partition+offset (a reader that rebalanced) is not a duplicate; the same sequence at two
 * offsets is.
 */
export function checkOutput(
  records: Iterable<SeenRecord>,
  expected: number,
  abortedAttempts: ReadonlySet<string> = new Set(),
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
    if (!Number.isInteger(r.seq) || r.seq < 0 || r.seq >= expected) unexpected += 1;
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
  let duplicates = 0;
  let lost = 0;
  for (let i = 0; i < expected; i += 1) {
    const c = count.get(i) ?? 0;
    if (c === 0) {
      lost += 1;
      if (samples.lost.length < SAMPLE) samples.lost.push(i);
    } else if (c > 1) {
      duplicates += c - 1;
      if (samples.duplicates.length < SAMPLE) samples.duplicates.push(i);
    }
  }
  return { expected, received, duplicates, lost, reordered, abortedVisible, unexpected, samples };
}

/** True when the verdict shows no violation. */
export function isExactlyOnce(v: OutputVerdict): boolean {
  return (
    v.duplicates === 0 && v.lost === 0 && v.reordered === 0 && v.abortedVisible === 0 && v.unexpected === 0
  );
}
