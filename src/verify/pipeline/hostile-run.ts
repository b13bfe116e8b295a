/**
 * `hamstring verify --pipeline --hostile`: the whole pipeline (every stage and the agent as processes,
 * no faults) fed first a clean phase of valid lines, then the hostile mix (hostile-lines.ts), each as
 * fast as the feed writes, the next phase once every stage read the last one to its end. Every 2 s
 * it samples each stage group's committed offsets and lag: a stage's rate in a phase is the records
 * it committed per second over the intervals it had a backlog throughout (so the rate of a stage
 * that was busy, not one waiting for input). Then the line accounting of both phases together:
 * every hostile line rejected once, every valid line (unknown fields included) processed once.
 */
import { rmSync } from 'node:fs';
import type { AdminPort } from '../../kafka/admin.ts';
import { generateTraffic } from '../../traffic/index.ts';
import { feedPaced, markedLines, type TimedLine } from './feed.ts';
import { HOSTILE_KINDS, hostileMix, type HostileKind, type MixLine } from './hostile-lines.ts';
import { accountLines, type LineAccounting } from './line-fates.ts';
import { lineIdOf } from './line-marks.ts';
import { PipelineEnvironment, type PipelineEnvironmentOptions } from './pipeline-environment.ts';
import { readPipeline } from './read-pipeline.ts';
import { groupLag, stageGroups } from './stage-groups.ts';

const SAMPLE_MS = 2_000;
/** Records a busy rate must rest on, in both phases, for the 2x rule to judge it. */
const MIN_JUDGED_RECORDS = 100;
/** A phase is over when every stage is at its end this many samples in a row (the collector's timer). */
const IDLE_SAMPLES = 3;
const PHASE_TIMEOUT_MS = 3_600_000;

export interface HostileOptions extends Omit<PipelineEnvironmentOptions, 'inspectors' | 'faults'> {
  readonly hosts: number;
  /** Lines of the hostile mix. */
  readonly lines: number;
  /** Lines of the clean phase before it. */
  readonly cleanLines: number;
  readonly share: number;
  readonly nearLimitEvery: number;
  readonly log: (line: string) => void;
}

/** A stage in one phase: records (of its input topics) per second while it had a backlog. */
export interface StageRate {
  readonly stage: string;
  /** undefined: never behind for a whole sample interval (it kept up with its input). */
  readonly cleanPerSecond: number | undefined;
  readonly hostilePerSecond: number | undefined;
  readonly cleanBusySeconds: number;
  readonly hostileBusySeconds: number;
  /**
   * Whether both rates rest on at least MIN_JUDGED_RECORDS records: a stage whose inputs are a
   * batch or two a second (an inspector at 1 record/s) has rates of whole records, and 0 against 1
   * would not mean slower.
   */
  readonly judged: boolean;
}

export interface HostileRun {
  readonly seed: number;
  readonly cleanLines: number;
  readonly mixLines: number;
  readonly hostileByKind: Readonly<Record<string, number>>;
  /** The collector's `failed_loglines` reasons (values cut off), per hostile kind. */
  readonly rejectedByReason: Readonly<Record<string, Readonly<Record<string, number>>>>;
  readonly cleanSeconds: number;
  readonly hostileSeconds: number;
  readonly rates: readonly StageRate[];
  readonly accounting: LineAccounting;
  readonly stagesBehind: readonly string[];
  readonly agentBehind: readonly string[];
  readonly unexpectedExits: readonly { label: string; code: number | null; signal: string | null }[];
  readonly durationMs: number;
}

interface GroupSample {
  readonly atMs: number;
  readonly committed: number;
  readonly lag: number;
}

async function committedSum(admin: AdminPort, group: string, topics: readonly string[]): Promise<number> {
  const offsets = await admin.groupOffsets(group, [...topics], 10_000);
  return offsets.reduce((sum, o) => sum + Math.max(0, o.offset), 0);
}

/** Samples every stage group until `done()` and every stage is at its end; returns the samples. */
async function samplePhase(
  env: PipelineEnvironment,
  done: () => boolean,
): Promise<Map<string, GroupSample[]>> {
  const groups = stageGroups(env.config, env.layout);
  const samples = new Map<string, GroupSample[]>([...groups.keys()].map((l) => [l, []]));
  const deadline = Date.now() + PHASE_TIMEOUT_MS;
  let idle = 0;
  while (idle < IDLE_SAMPLES && Date.now() < deadline) {
    const next = Date.now() + SAMPLE_MS;
    let behind = 0;
    await Promise.all(
      [...groups].map(async ([label, g]) => {
        const atMs = Date.now();
        const [committed, lag] = await Promise.all([
          committedSum(env.admin, g.group, g.topics).catch(() => undefined),
          groupLag(env.admin, g.group, g.topics, 10_000).catch(() => undefined),
        ]);
        if (committed === undefined || lag === undefined) {
          behind += 1;
          return;
        }
        behind += lag;
        samples.get(label)?.push({ atMs, committed, lag });
      }),
    );
    idle = done() && behind === 0 ? idle + 1 : 0;
    await new Promise((r) => setTimeout(r, Math.max(0, next - Date.now())));
  }
  return samples;
}

/** Records per second over the intervals that began and ended with a backlog, and their length. */
export function busyRate(samples: readonly GroupSample[]): {
  perSecond: number | undefined;
  seconds: number;
  records: number;
} {
  let records = 0;
  let ms = 0;
  for (let i = 1; i < samples.length; i += 1) {
    const a = samples[i - 1];
    const b = samples[i];
    if (a === undefined || b === undefined || a.lag === 0 || b.lag === 0) continue;
    records += b.committed - a.committed;
    ms += b.atMs - a.atMs;
  }
  return { perSecond: ms === 0 ? undefined : (records * 1000) / ms, seconds: ms / 1000, records };
}

/** Feeds `lines` as fast as the producer writes, sampling the stages until they read them all. */
async function phase(
  env: PipelineEnvironment,
  input: string,
  lines: Iterable<TimedLine>,
): Promise<{ samples: Map<string, GroupSample[]>; seconds: number }> {
  const began = Date.now();
  let fed = false;
  const sampling = samplePhase(env, () => fed);
  await feedPaced(env.cluster.bootstrapServers, input, lines, () => 0).finally(() => {
    fed = true;
  });
  const samples = await sampling;
  return { samples, seconds: (Date.now() - began) / 1000 };
}

/** A reason without the line's own values (quoted text, numbers), so that reasons group. */
export function reasonClass(reason: string): string {
  return (
    reason
      .replace(/\(.*$/, '')
      // A field's name stays; other quoted text is the line's own value.
      .replace(/(field )?"(?:[^"\\]|\\.)*"/g, (quoted, field: string | undefined) => (field ? quoted : '…'))
      .replace(/(?<![\w-])\d+(?![\w-])/g, 'N')
      .trim()
  );
}

export async function runHostile(o: HostileOptions): Promise<HostileRun> {
  const began = Date.now();
  rmSync(o.dir, { recursive: true, force: true });
  const env = await PipelineEnvironment.start({ ...o, inspectors: 'shipped', faults: false });
  // What the accounting needs of each line, kept compact: its validity and hostile kind.
  const valid: boolean[] = [];
  const kindOf = new Map<number, HostileKind>();
  const note = function* <L extends TimedLine & { kind?: HostileKind }>(lines: Iterable<L>): Generator<L> {
    for (const l of lines) {
      valid[l.id] = l.valid;
      if (l.kind !== undefined) kindOf.set(l.id, l.kind);
      yield l;
    }
  };
  try {
    const input = await env.startPipeline();
    const clean = generateTraffic({
      seed: o.seed,
      hosts: o.hosts,
      rate: 1000,
      durationSeconds: Math.ceil((o.cleanLines / 1000) * 1.2) + 10,
      startMs: Date.UTC(2026, 10, 30, 9),
    });
    const cleanLines = function* (): Generator<TimedLine> {
      let n = 0;
      for (const l of markedLines(clean, 0)) {
        if (n >= o.cleanLines) return;
        yield l;
        n += 1;
      }
    };
    o.log(`hostile: clean phase, ${o.cleanLines} valid lines as fast as the feed writes`);
    const a = await phase(env, input, note(cleanLines()));
    o.log(`hostile: clean phase done in ${a.seconds.toFixed(0)} s; the mix, ${o.lines} lines`);
    const mix: Iterable<MixLine> = hostileMix({
      seed: o.seed + 1,
      hosts: o.hosts,
      lines: o.lines,
      share: o.share,
      nearLimitEvery: o.nearLimitEvery,
      firstId: o.cleanLines,
    });
    const b = await phase(env, input, note(mix));
    o.log(`hostile: mix done in ${b.seconds.toFixed(0)} s; settling and reading every topic`);
    const { stagesBehind, agentBehind } = await env.settle();
    const read = await readPipeline({ config: env.config, database: o.database, clickhouse: false });
    const accounting = accountLines(
      valid.map((v, id) => ({ id, valid: v })),
      read,
    );
    const rates = [...a.samples.keys()].map((stage) => {
      const c = busyRate(a.samples.get(stage) ?? []);
      const h = busyRate(b.samples.get(stage) ?? []);
      return {
        stage,
        cleanPerSecond: c.perSecond,
        hostilePerSecond: h.perSecond,
        cleanBusySeconds: c.seconds,
        hostileBusySeconds: h.seconds,
        judged: c.records >= MIN_JUDGED_RECORDS && h.records >= MIN_JUDGED_RECORDS,
      };
    });
    return {
      seed: o.seed,
      cleanLines: o.cleanLines,
      mixLines: o.lines,
      hostileByKind: Object.fromEntries(
        HOSTILE_KINDS.map((k) => [k, [...kindOf.values()].filter((v) => v === k).length]),
      ),
      rejectedByReason: rejectedByReason(read.committedRows.failed_loglines ?? [], kindOf),
      cleanSeconds: a.seconds,
      hostileSeconds: b.seconds,
      rates,
      accounting,
      stagesBehind,
      agentBehind,
      unexpectedExits: env.processes.unexpectedExits,
      durationMs: Date.now() - began,
    };
  } finally {
    await env.close();
  }
}

function rejectedByReason(
  rows: readonly Readonly<Record<string, unknown>>[],
  kindOf: ReadonlyMap<number, HostileKind>,
): Record<string, Record<string, number>> {
  const out: Record<string, Record<string, number>> = {};
  for (const row of rows) {
    const id = lineIdOf(typeof row.message_text === 'string' ? row.message_text : '');
    const kind = id === undefined ? 'unmarked' : (kindOf.get(id) ?? 'valid line');
    const reason = reasonClass(typeof row.reason_for_failure === 'string' ? row.reason_for_failure : '');
    const byReason = (out[kind] ??= {});
    byReason[reason] = (byReason[reason] ?? 0) + 1;
  }
  return out;
}

/** The verdict's problems: the accounting's, a stage stuck, a process died, a stage over 2x slower. */
export function hostileProblems(run: HostileRun): string[] {
  return [
    ...run.accounting.problems,
    ...run.stagesBehind.map((g) => `a stage never read its inputs to the end: ${g}`),
    ...(run.agentBehind.length === 0
      ? []
      : [`the agent had not copied every row: ${run.agentBehind.join(', ')}`]),
    ...run.unexpectedExits.map((e) => `${e.label} exited by itself (code ${e.code}, signal ${e.signal})`),
    ...run.rates.flatMap((r) =>
      r.judged &&
      r.cleanPerSecond !== undefined &&
      r.hostilePerSecond !== undefined &&
      r.hostilePerSecond * 2 < r.cleanPerSecond
        ? [
            `${r.stage} was more than 2x slower in the hostile mix: ${r.hostilePerSecond.toFixed(0)} records/s against ${r.cleanPerSecond.toFixed(0)}`,
          ]
        : [],
    ),
  ];
}

const rate = (v: number | undefined) => (v === undefined ? 'kept up' : v.toFixed(0));

export function hostileText(run: HostileRun): string {
  const problems = hostileProblems(run);
  const a = run.accounting;
  return [
    `# hamstring verify --pipeline --hostile, seed ${run.seed}: ${problems.length === 0 ? 'passed' : 'FAILED'}`,
    '',
    `${run.cleanLines} clean lines in ${run.cleanSeconds.toFixed(0)} s, then ${run.mixLines} lines of the mix in ` +
      `${run.hostileSeconds.toFixed(0)} s (each phase fed as fast as the feed writes, until every stage read it); ` +
      `whole run ${(run.durationMs / 1000).toFixed(0)} s.`,
    '',
    '## Hostile lines',
    '',
    '| kind | lines | rejected, by reason |',
    '|---|---|---|',
    ...Object.entries(run.hostileByKind).map(
      ([kind, n]) =>
        `| ${kind} | ${n} | ${
          Object.entries(run.rejectedByReason[kind] ?? {})
            .map(([r, c]) => `${r}: ${c}`)
            .join('; ') || 'none (accepted)'
        } |`,
    ),
    ...Object.entries(run.rejectedByReason)
      .filter(([k]) => !(HOSTILE_KINDS as readonly string[]).includes(k))
      .map(([k, reasons]) => `| ${k} (rejected) | - | ${JSON.stringify(reasons)} |`),
    '',
    '## Stage rates (records of its inputs per second while it had a backlog)',
    '',
    '| stage | clean | hostile mix | busy s clean / mix | judged (100 records in both) |',
    '|---|---|---|---|---|',
    ...run.rates.map(
      (r) =>
        `| ${r.stage} | ${rate(r.cleanPerSecond)} | ${rate(r.hostilePerSecond)} | ${r.cleanBusySeconds.toFixed(0)} / ${r.hostileBusySeconds.toFixed(0)} | ${r.judged ? 'yes' : 'no'} |`,
    ),
    '',
    '## Accounting',
    '',
    `${a.lines} lines: ${Object.entries(a.fates)
      .map(([k, n]) => `${k} ${n}`)
      .join(
        ', ',
      )}; lost ${a.lost.length}, twice ${a.twice.length}, in two batches ${a.inTwoBatches.length}, ` +
      `misjudged ${a.misjudged.length}, batches inspected twice ${a.batchesInspectedTwice.length}, alerts twice ${a.alertsTwice.length}`,
    '',
    ...(problems.length > 0 ? ['## Problems', '', ...problems.map((p) => `- ${p}`), ''] : []),
  ].join('\n');
}
