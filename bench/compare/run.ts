/** One measured run: one peer copies the whole input to a fresh output, watched and checked. */
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import type { ChildProcess } from 'node:child_process';
import { createAdmin } from '../../src/kafka/admin.ts';
import { createTopics } from '../../test/support/pipeline-harness.ts';
import { ObserverProcess, type ObserverResult } from './java.ts';
import { startPeer, type Peer, type PeerRun } from './peers.ts';
import { CpuSampler, peakRssBytes } from './proc-stats.ts';

export const PARTITIONS = 6;

/** Peers and observers alive now: killed if the bench itself is interrupted. */
export const liveChildren = new Set<ChildProcess>();

function track(child: ChildProcess): ChildProcess {
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));
  return child;
}

export interface RunContext {
  bootstrap: string;
  brokerPid: number | undefined;
  classPath: string;
  records: number;
  batchTimeoutMs: number;
  consumerOverrides: Record<string, string>;
  producerOverrides: Record<string, string>;
  stateRoot: string;
  runId: string;
}

/** The share of the output before the window (warm-up) and where the window ends. */
export const WINDOW = { from: 0.1, to: 0.9 } as const;

export interface RunResult {
  peer: string;
  recordBytes: number;
  rep: number;
  /**
   * Output records made visible in the steady-state window / its length: from the first sample
   * with 10 % of the output visible to the first with 90 %, the same share for every peer. The
   * first 10 % is the warm-up (JIT, first fetches, a tiny first transaction), the last 10 % the
   * tail (partitions running dry one after the other).
   */
  recordsPerSec: number;
  windowSeconds: number;
  windowRecords: number;
  /**
   * The earlier window, from the first visible output to the last: it counts a peer's warm-up and
   * tail against it, and more so the smaller its first transaction.
   */
  firstToLastPerSec: number;
  /** 1-minute load average of the machine when the peer started and when it finished. */
  loadAverage: [number, number];
  /** Spawn of the peer to its first visible output. */
  startupMs: number;
  peerCpuUsPerRecord: number;
  brokerCpuUsPerRecord: number;
  /** CPU cores the peer used in the window. */
  peerCores: number;
  peakRssMb: number;
  /** Output records / transactions (offset commits at least once) the peer reported at exit. */
  recordsPerTxn: number | undefined;
  check: ObserverResult['check'];
  ok: boolean;
  error?: string;
}

export async function runOnce(
  ctx: RunContext,
  peer: Peer,
  recordBytes: number,
  input: string,
  rep: number,
): Promise<RunResult> {
  const tag = `${peer.id.replace(/[^A-Za-z0-9._-]/g, '_')}-${recordBytes}-${rep}-${ctx.runId}`;
  const output = `compare-out-${tag}`;
  const group = `compare-${tag}`;
  await createTopics(ctx.bootstrap, [output], PARTITIONS);
  const observer = new ObserverProcess(ctx.classPath, {
    bootstrap: ctx.bootstrap,
    input,
    output,
    group,
    expected: ctx.records,
    'timeout-ms': Math.max(120_000, ctx.records * 3),
  });
  let child: ChildProcess | undefined;
  let sampler: CpuSampler | undefined;
  let transactions: Promise<number | undefined> = Promise.resolve(undefined);
  const stateDir = `${ctx.stateRoot}/${tag}`;
  track(observer.child);
  try {
    await observer.ready;
    const run: PeerRun = {
      bootstrap: ctx.bootstrap,
      classPath: ctx.classPath,
      input,
      output,
      group,
      recordBytes,
      batchTimeoutMs: ctx.batchTimeoutMs,
      consumerOverrides: peer.kind === 'runtime' ? ctx.consumerOverrides : {},
      producerOverrides: peer.kind === 'runtime' ? ctx.producerOverrides : {},
      stateDir,
    };
    const spawnedAt = Date.now();
    const loadAtStart = loadavg()[0]!;
    child = track(startPeer(peer, run));
    const pid = child.pid!;
    transactions = transactionCount(child);
    sampler = new CpuSampler(ctx.brokerPid === undefined ? [pid] : [pid, ctx.brokerPid]);
    const exited = once(child, 'exit').then(([code]) => {
      throw new Error(`${peer.id} exited (${String(code)}) before the observer finished`);
    });
    const result = await Promise.race([observer.result, exited]);
    const rss = peakRssBytes(pid) ?? NaN;
    sampler.stop();
    await stop(child);
    const txns = await transactions;
    const load: [number, number] = [loadAtStart, loadavg()[0]!];
    return summarize(ctx, peer, recordBytes, rep, result, sampler, pid, spawnedAt, rss, txns, load);
  } finally {
    sampler?.stop();
    await stop(child);
    if (observer.child.exitCode === null) observer.child.kill('SIGKILL');
    rmSync(stateDir, { recursive: true, force: true });
    const admin = createAdmin(ctx.bootstrap);
    await admin.deleteTopics([output]).catch(() => undefined);
    admin.close();
  }
}

/** The `transactions <n>` line a peer prints when it stops. */
function transactionCount(child: ChildProcess): Promise<number | undefined> {
  const lines = createInterface({ input: child.stdout! });
  return new Promise((resolve) => {
    let n: number | undefined;
    lines.on('line', (l) => {
      if (l.startsWith('transactions ')) n = Number(l.slice('transactions '.length));
    });
    lines.on('close', () => resolve(n));
  });
}

async function stop(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(timer);
}

function summarize(
  ctx: RunContext,
  peer: Peer,
  recordBytes: number,
  rep: number,
  r: ObserverResult,
  cpu: CpuSampler,
  pid: number,
  spawnedAt: number,
  rssBytes: number,
  transactions: number | undefined,
  loadAverage: [number, number],
): RunResult {
  const { t0, t1, records: windowRecords } = outputWindow(r.samples, ctx.records, WINDOW.from, WINDOW.to);
  const firstToLast = outputWindow(r.samples, ctx.records, Number.MIN_VALUE, 1);
  const windowSeconds = (t1 - t0) / 1000;
  const perRecordUs = (seconds: number) => (seconds * 1e6) / windowRecords;
  const peerCpu = cpu.cpuSeconds(pid, t0, t1);
  const check = r.check;
  const exactlyOnce = peer.mode === 'exactly-once';
  const ok =
    !r.timedOut && check.missing === 0 && check.malformed === 0 && (!exactlyOnce || check.duplicates === 0);
  return {
    peer: peer.id,
    recordBytes,
    rep,
    recordsPerSec: windowRecords / windowSeconds,
    windowSeconds,
    windowRecords,
    firstToLastPerSec: (firstToLast.records * 1000) / (firstToLast.t1 - firstToLast.t0),
    loadAverage,
    startupMs: firstToLast.t0 - spawnedAt,
    peerCpuUsPerRecord: perRecordUs(peerCpu),
    brokerCpuUsPerRecord:
      ctx.brokerPid === undefined ? NaN : perRecordUs(cpu.cpuSeconds(ctx.brokerPid, t0, t1)),
    peerCores: peerCpu / windowSeconds,
    peakRssMb: rssBytes / 2 ** 20,
    recordsPerTxn: transactions ? check.records / transactions : undefined,
    check,
    ok,
  };
}

/**
 * The window from the first sample with at least `from` of the final output visible to the first
 * with at least `to`, and the input records it made visible. End offsets count transaction
 * markers too; scaling by records / final end offsets takes them out. `from` just above 0 opens
 * the window at the first visible output.
 */
export function outputWindow(
  samples: readonly (readonly [number, number, number])[],
  records: number,
  from: number,
  to: number,
): { t0: number; t1: number; records: number } {
  const final = samples[samples.length - 1]?.[1] ?? NaN;
  const first = samples.find((x) => x[1] >= from * final);
  const last = samples.find((x) => x[1] >= to * final);
  if (!first || !last || !(final > 0)) return { t0: NaN, t1: NaN, records: NaN };
  return { t0: first[0], t1: last[0], records: (records * (last[1] - first[1])) / final };
}
