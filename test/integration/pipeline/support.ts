import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { loadConfig, type HamstringConfig } from '../../../src/config/index.ts';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { READINESS_PROBE_TOPIC } from '../../../src/kafka/readiness.ts';
import { createProducer } from '../../../src/kafka/producer.ts';
import { createReadCommittedReader } from '../../../src/kafka/read-committed-reader.ts';
import type { FetchedRecord } from '../../../src/kafka/records.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { decodeBatch } from '../../../src/stages/messages.ts';
import { isUniqueName, uniqueTopic } from '../../helpers/names.ts';
import { DEFAULT_ATTEMPT_TOPIC } from '../../../src/runtime/delivery-attempts/kafka-attempt-store.ts';

type Tree = Record<string, unknown>;

/** The shipped config.yaml pointed at the test broker and ClickHouse, with short batch timeouts. */
export function pipelineTestConfig(o: {
  bootstrap: string;
  clickhousePort: number;
  /** Applied last, section by section (`pipeline.data_inspection`, ...). */
  edit?: (tree: Tree) => void;
}): { config: HamstringConfig; path: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'hamstring-pipeline-'));
  const tree = parseYaml(readFileSync('config.yaml', 'utf8')) as Tree;
  const pipeline = tree.pipeline as Tree;
  const collection = pipeline.log_collection as Tree;
  (collection.default_batch_handler_config as Tree).batch_timeout = 1;
  (pipeline.alerting as Tree).log_file_path = join(dir, 'alerts.jsonl');
  const environment = tree.environment as Tree;
  environment.kafka_bootstrap_servers = o.bootstrap;
  ((environment.monitoring as Tree).clickhouse_server as Tree).port = o.clickhousePort;
  // A killed member leaves the group within seconds, not the default 45.
  environment.kafka_consumer = {
    ...(environment.kafka_consumer as Tree),
    session_timeout_ms: 6_000,
    heartbeat_interval_ms: 1_000,
  };
  tree.runtime = { state: { dir: join(dir, 'state') } };
  // Markers of an earlier file's groups (same names) must not count against this file's records.
  environment.record_errors = {
    ...(environment.record_errors as Tree | undefined),
    delivery_attempts_topic: uniqueTopic('attempts'),
  };
  o.edit?.(tree);
  const path = join(dir, 'config.yaml');
  writeFileSync(path, toYaml(tree));
  return { config: loadConfig({ path }), path, dir };
}

/**
 * The edit of {@link pipelineTestConfig} for a `hamstring up --demo` under test: every batch goes on
 * to the detector (the StreamAD inspector's verdict depends on how lines fall into batches in
 * wall-clock time), the dashboard on a free port refreshing fast, and the monitoring tables in a
 * database of the test's own (line ids derive from offsets, which restart on a reset broker).
 */
export function demoTestEdit(database: string): (tree: Tree) => void {
  return (tree) => {
    const pipeline = tree.pipeline as { data_inspection: Tree[] };
    for (const inspector of pipeline.data_inspection) inspector.inspector_class_name = 'NoInspector';
    tree.dashboard = { port: 0, refresh_ms: 500, window_minutes: 5 };
    const environment = tree.environment as { monitoring: { clickhouse_server: Tree } };
    environment.monitoring.clickhouse_server.database = database;
  };
}

/**
 * Deletes every topic of the broker but Kafka's own, those named by test/helpers/names.ts, the
 * readiness probe's and the default delivery-attempt topic (which every worker built without a store
 * of its own uses, in the files running beside this one; pipelineTestConfig gives each file a topic
 * of its own instead), so a test starts without the stage groups' changelogs, offsets and batches of
 * an earlier test (the stage names, hence groups and changelog names, are fixed), while the files
 * running beside it (whose names are unique: scripts/integration-lanes.ts) keep their topics. The
 * probe's topic holds nothing a stage reads, and any client's readiness check creates it again.
 */
export async function resetBroker(bootstrap: string): Promise<void> {
  const admin = createAdmin(bootstrap, 'test-reset');
  try {
    const topics = (await admin.listTopics()).filter(
      (t) =>
        !t.startsWith('__') && !isUniqueName(t) && t !== READINESS_PROBE_TOPIC && t !== DEFAULT_ATTEMPT_TOPIC,
    );
    if (topics.length > 0) await admin.deleteTopics(topics);
    const deadline = Date.now() + 60_000;
    while ((await admin.listTopics()).some((t) => topics.includes(t))) {
      if (Date.now() > deadline) throw new Error('topics still listed 60 s after their deletion');
      await new Promise((r) => setTimeout(r, 500));
    }
  } finally {
    admin.close();
  }
}

/** Produces the values (keyed by `keyOf`) and waits until every one is delivered. */
export async function produceLines(
  bootstrap: string,
  topic: string,
  values: readonly (string | Buffer)[],
  keyOf: (value: string | Buffer, index: number) => string | null = () => null,
): Promise<void> {
  const p = createProducer(
    {
      bootstrapServers: bootstrap,
      clientId: 'test-lines',
      transactionTimeoutMs: 60_000,
      messageTimeoutMs: 60_000,
      apiTimeoutMs: 30_000,
    },
    silentLogger(),
  );
  await p.connect(30_000);
  try {
    for (const [i, value] of values.entries()) await p.produce({ topic, key: keyOf(value, i), value });
    await p.flush(120_000);
  } finally {
    await p.close(10_000);
  }
  // flush() returned, so every line is delivered or failed; delivery reports may still be on their way.
  const t = p.tally();
  if (t.failed > 0)
    throw new Error(
      `${t.failed} of ${values.length} lines not delivered: ${JSON.stringify(t.firstError?.toLog())}`,
    );
}

/**
 * Reads a topic from the start (read_committed) until `enough` holds or the deadline, then on to the
 * end of every partition (or 2 s more).
 */
export async function readUntil(
  bootstrap: string,
  topic: string,
  enough: (records: readonly FetchedRecord[]) => boolean,
  timeoutMs: number,
): Promise<FetchedRecord[]> {
  const out: FetchedRecord[] = [];
  const reader = createReadCommittedReader({ bootstrap, clientId: 'test-reader' });
  await reader.connect(30_000);
  reader.subscribe([topic]);
  const deadline = Date.now() + timeoutMs;
  let settleUntil: number | undefined;
  try {
    while (Date.now() < deadline) {
      out.push(...(await reader.consume(1000, 200)));
      if (settleUntil === undefined && enough(out)) settleUntil = Date.now() + 2_000;
      if (settleUntil !== undefined && (Date.now() > settleUntil || reader.atEnd())) break;
    }
  } finally {
    await reader.close(10_000);
  }
  return out;
}

/** One number from ClickHouse over HTTP. */
export async function clickhouseNumber(url: string, sql: string): Promise<number> {
  const res = await fetch(url, { method: 'POST', body: sql });
  const text = await res.text();
  if (!res.ok) throw new Error(`clickhouse: ${sql}: ${text}`);
  return Number(text.trim());
}

/**
 * Polls until `read` returns what `done` accepts, or returns its last value at the deadline. A read
 * that throws (a busy ClickHouse dropping a connection) is tried again; at the deadline it throws.
 */
export async function pollUntil<T>(
  read: () => Promise<T>,
  done: (v: T) => boolean,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await read();
      if (done(v) || Date.now() > deadline) return v;
    } catch (e) {
      if (Date.now() > deadline) throw e;
    }
    await new Promise((r) => setTimeout(r, 1_000));
  }
}

/**
 * How often each domain name is among the batches' own lines (the context lines a batch carries
 * over from its subnet's previous batch left out): each line sent exactly once counts 1.
 */
export function ownLineCounts(records: readonly { value: Buffer | null }[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of records) {
    const batch = decodeBatch(r.value);
    const context = new Set(batch.context_logline_ids ?? []);
    for (const line of batch.data)
      if (!context.has(line.logline_id)) {
        const name = String(line.domain_name);
        counts.set(name, (counts.get(name) ?? 0) + 1);
      }
  }
  return counts;
}
