import { createAdmin, type AdminPort } from '../kafka/admin.ts';
import { createPartitionReader, type PartitionReader } from '../kafka/attempt-log.ts';
import type { FetchedRecord } from '../kafka/records.ts';
import { createLogger, type Logger } from '../observability/logger.ts';
import {
  defaultRecordErrorPolicy,
  DLT_HEADERS,
  NonRetryableError,
  TransactionalWorker,
  type RecordFailure,
  type Stage,
  type StageOutput,
  type StageRecord,
  type WorkerHooks,
  type WorkerKafkaOptions,
} from '../runtime/index.ts';

/** Header every replayed record carries: `<dlt topic>@<partition>:<offset>` of its dead letter. */
export const REPLAYED_FROM_HEADER = 'hamstring.replayed-from';

const DLT_HEADER_PREFIX = 'hamstring.dlt.';

/** Consumer group (and transactional id) of the replay of a DLT: a second run resumes, never repeats. */
export function replayGroupId(dltTopic: string): string {
  return `hamstring-dlt-replay.${dltTopic}`;
}

/** Where dead letters without an origin go: they are moved aside, so the replay can finish. */
export function unreplayableTopic(dltTopic: string): string {
  return `${dltTopic}.unreplayable`;
}

/** A dead letter that cannot be replayed (no origin topic header and no `--to`). */
export class UnreplayableRecord extends NonRetryableError {
  override readonly name = 'UnreplayableRecord';
  override readonly code = 'DLT_UNREPLAYABLE';
  constructor(message: string) {
    super(message, 'unreplayable');
  }
}

/**
 * The record to re-publish for a dead letter: original key and value, original headers without the
 * `hamstring.dlt.*` ones, plus `hamstring.replayed-from`. The target is `to` when given, else the
 * origin topic header. Throws {@link UnreplayableRecord} when there is no target.
 */
export function replayOf(record: StageRecord, to?: string): StageOutput {
  const origin = record.headers[DLT_HEADERS.topic]?.toString('utf8');
  const topic = to ?? origin;
  if (topic === undefined || topic === '')
    throw new UnreplayableRecord(`dead letter has no ${DLT_HEADERS.topic} header`);
  const headers: Record<string, Buffer | string> = {};
  for (const [k, v] of Object.entries(record.headers)) if (!k.startsWith(DLT_HEADER_PREFIX)) headers[k] = v;
  headers[REPLAYED_FROM_HEADER] = `${record.topic}@${record.partition}:${record.offset}`;
  return {
    topic,
    key: record.key,
    value: record.value,
    headers,
    source: { topic: record.topic, partition: record.partition, offset: record.offset },
  };
}

/** What the replay stage decided for one dead letter (`target` undefined: unreplayable). */
export interface ReplayDecision {
  partition: number;
  offset: number;
  target: string | undefined;
  reason?: string;
}

/**
 * The replay as a stage: a router (`outputTopics: 'any'`) from the DLT to each record's origin.
 * Unreplayable records are reported as non-retryable failures, so the worker dead-letters them (to
 * `<dlt>.unreplayable`) in the same transaction as the offsets.
 */
export function replayStage(
  dltTopic: string,
  options: { to?: string; onDecision?: (d: ReplayDecision) => void } = {},
): Stage {
  return {
    name: replayGroupId(dltTopic),
    shortName: 'dlt-replay',
    inputTopics: [dltTopic],
    outputTopics: 'any',
    isRetryable: () => false,
    process(records) {
      const outputs: StageOutput[] = [];
      const failures: RecordFailure[] = [];
      for (const r of records) {
        try {
          const out = replayOf(r, options.to);
          outputs.push(out);
          options.onDecision?.({ partition: r.partition, offset: r.offset, target: out.topic });
        } catch (error) {
          failures.push({ record: r, error });
          options.onDecision?.({
            partition: r.partition,
            offset: r.offset,
            target: undefined,
            reason: error instanceof Error ? error.message : String(error),
          });
        }
      }
      return { outputs, failures };
    },
  };
}

export interface ReplayOptions {
  dltTopic: string;
  kafka: WorkerKafkaOptions;
  /** Overrides every record's target topic. */
  to?: string;
  /** Reads what would be replayed and commits nothing. */
  dryRun?: boolean;
  /** Records per transaction. Default 500. */
  batchSize?: number;
  /** Bound of the whole run (scan and replay). Default 10 minutes. */
  timeoutMs?: number;
  log?: Logger;
  /**
   * The replay worker's delivery-attempt topic (`record_errors.delivery_attempts_topic`), or false
   * when `track_delivery_attempts` is off. Default: the worker's own store on `hamstring.delivery-attempts`.
   */
  attemptTopic?: string | false;
  /** Test hooks passed to the worker (e.g. hang before the nth commit, then kill -9). */
  hooks?: WorkerHooks;
}

export interface ReplaySummary {
  dltTopic: string;
  dryRun: boolean;
  /** Records replayed (or, in a dry run, to replay) per target topic. */
  replayed: Record<string, number>;
  /** Dead letters without a target: moved to `<dlt>.unreplayable` (or, in a dry run, to be). */
  unreplayable: ReplayDecision[];
  /** Per record decision of the records this run covered, in partition/offset order. */
  decisions: ReplayDecision[];
  /** High watermarks of the DLT captured at start: the run ends once committed up to them. */
  highWatermarks: Record<number, number>;
}

/**
 * `hamstring dlt replay`: re-publishes the dead letters of `dltTopic` to their origin topics,
 * exactly once. A scan (read_committed, no group) first reads what lies between the replay group's
 * committed offsets and the high watermarks captured at start; then a TransactionalWorker replays
 * it (outputs and DLT offsets in one transaction, a stable transactional id that fences a killed
 * previous run) and the run ends when the group's committed offsets reach the last scanned record
 * + 1 in every partition. Why not the high watermark itself: a transactionally written DLT ends
 * with a commit marker, so the committed offset after its last record is one below it.
 */
export async function replayDeadLetters(options: ReplayOptions): Promise<ReplaySummary> {
  const log = (options.log ?? createLogger({}, 2)).child({ component: 'dlt-replay', dlt: options.dltTopic });
  const timeoutMs = options.timeoutMs ?? 600_000;
  const deadline = Date.now() + timeoutMs;
  const group = replayGroupId(options.dltTopic);
  const bootstrap = options.kafka.bootstrapServers;
  const admin = createAdmin(bootstrap, `${group}-admin`);
  const reader = createPartitionReader(
    { bootstrapServers: bootstrap, clientId: `${group}-scan`, isolation: 'read_committed' },
    log,
  );
  try {
    await reader.connect(30_000);
    const partitions = await reader.partitions(options.dltTopic, 30_000);
    if (!partitions) throw new Error(`topic ${options.dltTopic} does not exist`);
    const high = await reader.highWatermarks(options.dltTopic, 30_000);
    const committed = await committedOffsets(admin, group, options.dltTopic);
    const scanned = await scan(reader, options.dltTopic, partitions, committed, high, deadline);
    const decisions = scanned.map((r) => decide(r, options.to));
    const targets = new Map<number, number>();
    for (const r of scanned) targets.set(r.partition, Math.max(targets.get(r.partition) ?? 0, r.offset + 1));
    const highWatermarks = Object.fromEntries(high);

    if (options.dryRun || targets.size === 0)
      return summarize(options.dltTopic, !!options.dryRun, decisions, highWatermarks);

    await checkTopics(reader, admin, options.dltTopic, decisions);
    const seen = new Map<string, ReplayDecision>();
    const worker = new TransactionalWorker({
      stage: replayStage(options.dltTopic, {
        ...(options.to !== undefined ? { to: options.to } : {}),
        onDecision: (d) => seen.set(`${d.partition}:${d.offset}`, d),
      }),
      instanceId: '0',
      mode: 'exactly-once',
      kafka: { ...options.kafka, groupId: group, transactionalId: group },
      batch: { size: options.batchSize ?? 500, timeoutMs: 100 },
      recordErrors: {
        deadLetterTopic: () => unreplayableTopic(options.dltTopic),
        nonRetryableKinds: [...defaultRecordErrorPolicy.nonRetryableKinds, 'unreplayable'],
        // Moving unreplayable records aside is the replay's job, never a reason to stop it.
        deadLetterLimit: { maxShare: 1, window: 1, maxConsecutive: Number.MAX_SAFE_INTEGER },
      },
      ...(options.attemptTopic === false
        ? { attemptStore: false }
        : options.attemptTopic !== undefined
          ? { attemptTopic: options.attemptTopic }
          : {}),
      log,
      ...(options.hooks ? { hooks: options.hooks } : {}),
    });
    await worker.start();
    let final: Map<number, number>;
    try {
      final = await waitForCommits(admin, worker, group, options.dltTopic, targets, deadline);
    } finally {
      await worker.stop();
    }
    // Only what this run committed counts: records processed in an aborted attempt are also in `seen`.
    const done = [...seen.values()]
      .filter((d) => d.offset < (final.get(d.partition) ?? 0))
      .sort((a, b) => a.partition - b.partition || a.offset - b.offset);
    return summarize(options.dltTopic, false, done, highWatermarks);
  } finally {
    admin.close();
    await reader.close(5_000);
  }
}

function decide(r: FetchedRecord, to: string | undefined): ReplayDecision {
  try {
    return { partition: r.partition, offset: r.offset, target: replayOf(r, to).topic };
  } catch (e) {
    return { partition: r.partition, offset: r.offset, target: undefined, reason: (e as Error).message };
  }
}

function summarize(
  dltTopic: string,
  dryRun: boolean,
  decisions: ReplayDecision[],
  highWatermarks: Record<number, number>,
): ReplaySummary {
  const replayed: Record<string, number> = {};
  for (const d of decisions) if (d.target !== undefined) replayed[d.target] = (replayed[d.target] ?? 0) + 1;
  return {
    dltTopic,
    dryRun,
    replayed,
    unreplayable: decisions.filter((d) => d.target === undefined),
    decisions,
    highWatermarks,
  };
}

async function committedOffsets(
  admin: AdminPort,
  group: string,
  topic: string,
): Promise<Map<number, number>> {
  const list = await admin.groupOffsets(group, [topic]);
  return new Map(list.filter((o) => o.offset >= 0).map((o) => [o.partition, o.offset]));
}

/** Reads [committed, high) of every partition with read_committed; aborted records never show. */
async function scan(
  reader: PartitionReader,
  topic: string,
  partitions: number[],
  committed: Map<number, number>,
  high: Map<number, number>,
  deadline: number,
): Promise<FetchedRecord[]> {
  const open = partitions.filter((p) => (committed.get(p) ?? 0) < (high.get(p) ?? 0));
  if (open.length === 0) return [];
  reader.assign(open.map((partition) => ({ topic, partition, offset: committed.get(partition) ?? -2 })));
  const out: FetchedRecord[] = [];
  // The end-of-partition offset of a read_committed reader is the last stable offset: while a
  // transaction on the DLT is open the scan waits for it (bounded by the deadline).
  const behind = () =>
    open.filter((p) => (reader.position({ topic, partition: p }) ?? -1) < (high.get(p) ?? 0));
  while (behind().length > 0) {
    if (Date.now() > deadline)
      throw new Error(
        `timed out reading ${topic} up to its high watermarks (partitions ${behind().join(', ')})`,
      );
    for (const r of await reader.consume(1_000, 200))
      if (r.offset < (high.get(r.partition) ?? 0)) out.push(r);
  }
  return out.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
}

/** Targets must exist (a produce to a missing topic would abort every transaction); creates `.unreplayable`. */
async function checkTopics(
  reader: PartitionReader,
  admin: AdminPort,
  dltTopic: string,
  decisions: ReplayDecision[],
): Promise<void> {
  const targets = new Set(decisions.flatMap((d) => (d.target !== undefined ? [d.target] : [])));
  const missing: string[] = [];
  for (const t of targets) if (!(await reader.partitions(t, 30_000))) missing.push(t);
  if (missing.length > 0)
    throw new Error(`target topic(s) ${missing.join(', ')} do not exist; create them or pass --to <topic>`);
  if (decisions.some((d) => d.target === undefined)) {
    const aside = unreplayableTopic(dltTopic);
    if (!(await reader.partitions(aside, 30_000))) {
      const brokers = await reader.brokerCount(30_000);
      await admin.createTopics([{ topic: aside, partitions: 1, replicationFactor: Math.min(3, brokers) }]);
      const until = Date.now() + 30_000;
      while (!(await reader.partitions(aside, 30_000)) && Date.now() < until)
        await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function waitForCommits(
  admin: AdminPort,
  worker: TransactionalWorker,
  group: string,
  topic: string,
  targets: Map<number, number>,
  deadline: number,
): Promise<Map<number, number>> {
  for (;;) {
    const status = worker.status();
    if (status.state === 'failed' || status.state === 'stopped')
      throw new Error(`replay worker ${status.state}${status.failure ? `: ${status.failure}` : ''}`);
    const committed = await committedOffsets(admin, group, topic);
    if ([...targets].every(([p, target]) => (committed.get(p) ?? -1) >= target)) return committed;
    if (Date.now() > deadline) {
      const lagging = [...targets].filter(([p, t]) => (committed.get(p) ?? -1) < t);
      throw new Error(
        `timed out replaying ${topic}: committed ${lagging.map(([p, t]) => `${p}@${committed.get(p) ?? 'none'}<${t}`).join(', ')}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
