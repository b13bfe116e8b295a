/** Medians over repetitions, the table, the ratios and the targets of bench:compare. */
import type { Peer } from './peers.ts';
import type { RunResult } from './run.ts';

export interface Row {
  peer: string;
  label: string;
  recordBytes: number;
  runs: number;
  failed: number;
  recordsPerSec: number;
  /** Smallest and largest throughput of the repetitions: the noise. */
  minPerSec: number;
  maxPerSec: number;
  peerCpuUsPerRecord: number;
  brokerCpuUsPerRecord: number;
  peerCores: number;
  peakRssMb: number;
  recordsPerTxn: number | undefined;
  startupMs: number;
  /** Median throughput over the earlier window (first visible output to the last). */
  firstToLastPerSec: number;
  /** Lowest and highest 1-minute load average seen at a start or end of the set's runs. */
  loadMin: number;
  loadMax: number;
}

export interface Ratio {
  name: string;
  recordBytes: number;
  /** Of the medians. */
  value: number;
  /**
   * Median of the per-repetition ratios: the two runs of one repetition ran minutes apart at most,
   * so this cancels slow drifts of the machine's load better than the ratio of medians.
   */
  paired: number;
  pairedMin: number;
  pairedMax: number;
  /** The paired median over the earlier window (first visible output to the last). */
  pairedFirstToLast: number;
  target?: number;
}

export function median(xs: readonly number[]): number {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
}

export function rows(peers: readonly Peer[], sizes: readonly number[], results: readonly RunResult[]): Row[] {
  const out: Row[] = [];
  for (const size of sizes)
    for (const p of peers) {
      const rs = results.filter((r) => r.peer === p.id && r.recordBytes === size);
      const good = rs.filter((r) => r.ok);
      const m = (f: (r: RunResult) => number | undefined) => median(good.map((r) => f(r) ?? NaN));
      const txn = m((r) => r.recordsPerTxn);
      out.push({
        peer: p.id,
        label: p.label,
        recordBytes: size,
        runs: rs.length,
        failed: rs.length - good.length,
        recordsPerSec: m((r) => r.recordsPerSec),
        minPerSec: Math.min(...good.map((r) => r.recordsPerSec)),
        maxPerSec: Math.max(...good.map((r) => r.recordsPerSec)),
        peerCpuUsPerRecord: m((r) => r.peerCpuUsPerRecord),
        brokerCpuUsPerRecord: m((r) => r.brokerCpuUsPerRecord),
        peerCores: m((r) => r.peerCores),
        peakRssMb: m((r) => r.peakRssMb),
        recordsPerTxn: Number.isFinite(txn) ? txn : undefined,
        startupMs: m((r) => r.startupMs),
        firstToLastPerSec: m((r) => r.firstToLastPerSec),
        loadMin: Math.min(...good.flatMap((r) => r.loadAverage)),
        loadMax: Math.max(...good.flatMap((r) => r.loadAverage)),
      });
    }
  return out;
}

/** runtime-eos (and any runtime-eos-*) against each reference present in the rows. */
export function ratios(table: readonly Row[], results: readonly RunResult[]): Ratio[] {
  const at = (peer: string, size: number) => table.find((r) => r.peer === peer && r.recordBytes === size);
  const out: Ratio[] = [];
  const pairs: [string, string, number | undefined][] = [
    ['runtime-eos', 'streams-eq', 1.0],
    ['runtime-eos', 'java-loop', 1.0],
    ['runtime-eos', 'streams-default', undefined],
    ['runtime-eos', 'runtime-alo', 0.9],
    ['runtime-eos-interval', 'streams-default', 1.0],
  ];
  for (const v of new Set(table.filter((r) => r.peer.includes('@')).map((r) => r.peer.split('@')[1]!))) {
    pairs.push(
      [`runtime-eos@${v}`, 'runtime-eos', undefined],
      [`runtime-alo@${v}`, 'runtime-alo', undefined],
    );
    pairs.push([`runtime-eos@${v}`, `runtime-alo@${v}`, 0.9], [`runtime-eos@${v}`, 'streams-eq', 1.0]);
    pairs.push([`runtime-eos@${v}`, 'java-loop', 1.0]);
  }
  for (const size of new Set(table.map((r) => r.recordBytes)))
    for (const [a, b, target] of pairs) {
      const x = at(a, size);
      const y = at(b, size);
      if (!x || !y) continue;
      const perRep: number[] = [];
      const perRepFirstToLast: number[] = [];
      for (const ra of results.filter((r) => r.ok && r.peer === a && r.recordBytes === size)) {
        const rb = results.find((r) => r.ok && r.peer === b && r.recordBytes === size && r.rep === ra.rep);
        if (!rb) continue;
        perRep.push(ra.recordsPerSec / rb.recordsPerSec);
        perRepFirstToLast.push(ra.firstToLastPerSec / rb.firstToLastPerSec);
      }
      out.push({
        name: `${a} / ${b}`,
        recordBytes: size,
        value: x.recordsPerSec / y.recordsPerSec,
        paired: median(perRep),
        pairedMin: Math.min(...perRep),
        pairedMax: Math.max(...perRep),
        pairedFirstToLast: median(perRepFirstToLast),
        ...(target === undefined ? {} : { target }),
      });
    }
  return out;
}

const f = (n: number | undefined, d = 0) => (n !== undefined && Number.isFinite(n) ? n.toFixed(d) : '-');

export function markdown(table: readonly Row[], rs: readonly Ratio[]): string {
  const lines = [
    '| peer | record | records/s 10→90 % (median) | min–max | records/s first→last output | peer CPU µs/rec | broker CPU µs/rec | peer cores | peak RSS MB | records/txn | start-up ms | load (1 min) | runs (failed) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...table.map(
      (r) =>
        `| ${r.label} | ${r.recordBytes} B | ${f(r.recordsPerSec)} | ${f(r.minPerSec)}–${f(r.maxPerSec)} | ${f(r.firstToLastPerSec)} | ${f(r.peerCpuUsPerRecord, 1)} | ${f(r.brokerCpuUsPerRecord, 1)} | ${f(r.peerCores, 2)} | ${f(r.peakRssMb)} | ${f(r.recordsPerTxn)} | ${f(r.startupMs)} | ${f(r.loadMin, 1)}–${f(r.loadMax, 1)} | ${r.runs} (${r.failed}) |`,
    ),
    '',
    '| ratio (throughput, 10→90 % window) | record | of medians | paired median (min–max) | paired, first→last window | target |',
    '|---|---|---|---|---|---|',
    ...rs.map(
      (x) =>
        `| ${x.name} | ${x.recordBytes} B | ${x.value.toFixed(2)} | ${f(x.paired, 2)} (${f(x.pairedMin, 2)}–${f(x.pairedMax, 2)}) | ${f(x.pairedFirstToLast, 2)} | ${x.target === undefined ? '-' : `>= ${x.target} ${x.value >= x.target ? 'met' : 'NOT met'}`} |`,
    ),
  ];
  return lines.join('\n');
}
