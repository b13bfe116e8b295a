import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startPipeline, type RunningPipeline } from '../../../src/app/pipeline.ts';
import { bootstrapServers, type HamstringConfig } from '../../../src/config/index.ts';
import { createAdmin } from '../../../src/kafka/admin.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { decodeBatch, pipelineTopic } from '../../../src/stages/index.ts';
import { generateTraffic } from '../../../src/traffic/index.ts';
import { buildLedger } from '../../../src/verify/pipeline/ledger.ts';
import { layoutTopics, pipelineLayout } from '../../../src/verify/pipeline/layout.ts';
import { accountLines, type InputLine } from '../../../src/verify/pipeline/line-fates.ts';
import { lineMark, markJsonLine } from '../../../src/verify/pipeline/line-marks.ts';
import { waitQuiet } from '../../../src/verify/pipeline/quiet.ts';
import { readPipeline } from '../../../src/verify/pipeline/read-pipeline.ts';
import type { PipelineRead } from '../../../src/verify/pipeline/records.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { testKafka } from '../../helpers/kafka-fixture.ts';
import {
  clickhouseNumber,
  pipelineTestConfig,
  pollUntil,
  produceLines,
  readUntil,
  resetBroker,
} from '../pipeline/support.ts';

const INVALID = 300;

let bootstrap: string;
let clickhouseUrl: string;
let clickhousePort: number;
let pipeline: RunningPipeline | undefined;

before(async () => {
  const [kafka, clickhouse] = await Promise.all([testKafka(), testClickHouse()]);
  bootstrap = kafka.bootstrap;
  clickhouseUrl = clickhouse.url;
  clickhousePort = Number(new URL(clickhouse.url).port);
  await resetBroker(bootstrap);
});
after(async () => {
  await pipeline?.stop();
});

/** An invalid line of one of six kinds, its mark among its first bytes (where `message_text` keeps it). */
function invalidLine(id: number): string | Buffer {
  const mark = lineMark(id);
  const base = `{${mark},"ts":"2026-11-30T10:00:00.000000Z","src_ip":"10.0.0.10","status_code":"NOERROR"`;
  switch (id % 6) {
    case 0:
      return `not json ${mark}`;
    case 1:
      return `{${mark},"ts":"2026-11-30T10:00:00.000000Z","src_ip":"999.1.1.1","status_code":"NOERROR"}`;
    case 2:
      return `${base.replace('2026-11-30T10:00:00.000000Z', 'yesterday')}}`;
    case 3:
      return `${mark} ${'x'.repeat(20_000)}`; // over max_line_bytes
    case 4:
      return Buffer.concat([
        Buffer.from(`{${mark},"ts":"`),
        Buffer.from([0xff, 0xfe, 0xc3, 0x28]),
        Buffer.from('"}'),
      ]);
    default:
      return `[{${mark}},${'['.repeat(100)}${']'.repeat(100)}]`; // nested deeper than 32
  }
}

/** Waits until no pipeline topic grows for `quietMs`: every line and every timer-closed bin went through. */
async function pipelineQuiet(config: HamstringConfig, quietMs: number, timeoutMs: number): Promise<void> {
  const topics = new Set(Object.values(layoutTopics(pipelineLayout(config))).flat());
  const admin = createAdmin(bootstrapServers(config), 'accounting-quiet');
  try {
    // Only this run's topics: the files beside this one write to the same broker.
    if (!(await waitQuiet(admin, quietMs, Date.now() + timeoutMs, (all) => all.filter((t) => topics.has(t)))))
      throw new Error(`the pipeline topics still grew after ${timeoutMs} ms`);
  } finally {
    admin.close();
  }
}

test('a fault-free run gives every line exactly one fate, nothing twice, clean monitoring; a batch produced again and monitoring rows tampered with are reported', async () => {
  const { config } = pipelineTestConfig({ bootstrap, clickhousePort });
  const database = `accounting_${Date.now()}`;
  const traffic = generateTraffic({
    seed: 11,
    rate: 100,
    durationSeconds: 40,
    hosts: 64,
    startMs: Date.now() - 60_000,
  });
  const generated = [...traffic.lines()];
  const input: InputLine[] = [];
  const lines: (string | Buffer)[] = [];
  const keys: (string | null)[] = [];
  let invalid = 0;
  const inputIdOf: number[] = [];
  for (const [i, g] of generated.entries()) {
    inputIdOf.push(input.length);
    input.push({ id: input.length, valid: true });
    lines.push(markJsonLine(g.line, input.length - 1));
    keys.push(g.srcIp);
    // Invalid lines spread through the valid ones.
    if (invalid < INVALID && i % Math.floor(generated.length / INVALID) === 0) {
      input.push({ id: input.length, valid: false });
      lines.push(invalidLine(input.length - 1));
      keys.push(null);
      invalid += 1;
    }
  }
  assert.equal(invalid, INVALID);
  const nxdomain = generated.filter(
    (g) => (JSON.parse(g.line) as { status_code: string }).status_code === 'NXDOMAIN',
  ).length;
  // Input line ids of each host's NXDOMAIN lines: where they went tells a missed alert's cause.
  const nxdomainLinesOf = new Map<string, number[]>();
  for (const [i, g] of generated.entries())
    if ((JSON.parse(g.line) as { status_code: string }).status_code === 'NXDOMAIN')
      nxdomainLinesOf.set(g.srcIp, [...(nxdomainLinesOf.get(g.srcIp) ?? []), inputIdOf[i]!]);
  const infected = traffic.truth
    .filter((h) => h.role !== 'benign')
    .map((h) => h.ip)
    .sort();

  pipeline = await startPipeline({
    config,
    partitions: 3,
    log: silentLogger(),
    agent: { database },
    env: { ...process.env, HAMSTRING_LOG_LEVEL: 'warn' },
  });
  await produceLines(
    bootstrap,
    pipelineTopic(config, 'logserver_in', 'dns'),
    lines,
    (_, i) => keys[i] ?? null,
  );
  await pipelineQuiet(config, 6_000, 120_000);
  // Nothing in a fault-free run may abort a transaction (a stopping stage may, below). Transaction
  // protocol version 2 once did, when a leader refused records while the previous commit's markers
  // were still being written.
  const aborted = await Promise.all(
    pipeline.stages.workers.map(async (w) => {
      const { values } = await w.metrics.aborts.get();
      return { labels: values.map((v) => v.labels), aborts: values.reduce((n, v) => n + v.value, 0) };
    }),
  );
  assert.deepEqual(
    aborted.filter((a) => a.aborts > 0),
    [],
    'no stage aborted a transaction while the lines passed',
  );
  await pipeline.stopStages();
  // A stopping stage may abort its last transaction, so the agent's drain counts a partition that
  // stood still for 8 s as done; yet it also stands still while the agent inserts one large batch of
  // rows (it reported drained with ~10,000 rows not yet in ClickHouse). So the accounting is read
  // again until ClickHouse shows every row the stages committed, or the deadline. A loaded machine
  // slows the agent (50 rows an insert) more than anything else here.
  const drained = await pipeline.drainAgent({ timeoutMs: 60_000 });
  assert.ok(drained.drained, `monitoring agent not drained: ${JSON.stringify(drained)}`);
  let read: PipelineRead | undefined;
  const report = await pollUntil(
    async () => accountLines(input, (read = await readPipeline({ config, database }))),
    (r) => r.monitoringMissing.length === 0,
    120_000,
  );
  const summary = JSON.stringify({
    problems: report.problems,
    fates: report.fates,
    paths: report.paths.map((p) => ({ path: p.path, fates: p.fates, lost: p.lost.length })),
    drained,
  });
  assert.deepEqual(report.problems, [], summary);
  assert.equal(report.ok, true);
  assert.deepEqual(report.lost, [], 'lines lost');
  assert.deepEqual(report.inTwoBatches, [], 'lines twice');
  assert.deepEqual(report.batchesInspectedTwice, [], 'batches inspected twice');
  assert.deepEqual(report.alertsTwice, [], 'alerts twice');
  assert.equal(report.monitoringChecked, true);
  assert.deepEqual([report.monitoringMissing, report.monitoringTwice], [[], []], 'monitoring rows');
  assert.equal(report.fates.rejected, INVALID, 'rejected = invalid lines');
  const valid = generated.length;
  assert.equal(
    report.fates.filtered + report.fates.normal + report.fates.scored + report.fates.alerted,
    valid,
  );
  const dga = report.paths.find((p) => p.path.endsWith('/dga_detector'));
  assert.ok(dga, 'the DGA path');
  // The DGA prefilter keeps NXDOMAIN lines only.
  assert.equal(dga.fates.filtered, valid - nxdomain, 'filtered = NOERROR lines');
  assert.equal(dga.fates.normal + dga.fates.scored + dga.fates.alerted, nxdomain, 'the rest judged');
  // Nearly every NXDOMAIN line lies in a bin the stream model finds anomalous: normal may be 0.
  assert.ok(dga.fates.alerted > 0 && dga.fates.scored > 0, JSON.stringify(dga.fates));
  assert.deepEqual(
    report.alertedHosts,
    infected,
    `alerted hosts = infected and tunnelling hosts; where the DGA lines of each host not alerted went: ${JSON.stringify(
      infected
        .filter((ip) => !report.alertedHosts.includes(ip))
        .map((ip) => ({ ip, ...dgaFates(read!, nxdomainLinesOf.get(ip) ?? []) })),
    )}`,
  );

  // Now break what the run left: produce one consumed batch to the DGA inspector's input again,
  // delete the failed_loglines row of one rejected line, and copy one loglines row under another identity.
  const inspectorInput = pipelineTopic(config, 'prefilter_to_inspector', 'dga_inspector');
  const consumed = (await readUntil(bootstrap, inspectorInput, (rs) => rs.length > 0, 30_000))[0];
  assert.ok(consumed, 'a batch on the inspector input');
  const again = { batch: decodeBatch(consumed.value) };
  await produceLines(bootstrap, inspectorInput, [JSON.stringify(again.batch)]);
  const sql = (q: string) => clickhouseNumber(clickhouseUrl, q);
  const firstInvalid = input.find((l) => !l.valid)?.id ?? -1;
  const marked = `match(message_text, '${lineMark(firstInvalid)}([^0-9]|$)')`;
  await sql(`ALTER TABLE ${database}.failed_loglines DELETE WHERE ${marked}`);
  const left = await pollUntil(
    () => sql(`SELECT count() FROM ${database}.failed_loglines_dedup WHERE ${marked}`),
    (n) => n === 0,
    30_000,
  );
  assert.equal(left, 0, 'the failed_loglines row deleted');
  const copiedLine = again.batch.data.find(
    (l) => !(again.batch.context_logline_ids ?? []).includes(l.logline_id),
  );
  assert.ok(copiedLine);
  await sql(
    `INSERT INTO ${database}.loglines SELECT src_topic, src_partition, src_offset + 1000000, row_index, logline_id, subnet_id, timestamp, status, client_ip, record_type, additional_fields FROM ${database}.loglines_dedup WHERE logline_id = '${copiedLine.logline_id}'`,
  );

  const broken = accountLines(input, await readPipeline({ config, database, stallMs: 30_000 }));
  assert.equal(broken.ok, false);
  assert.deepEqual(broken.batchesInspectedTwice, [again.batch.batch_id], 'the batch produced again');
  const own = new Set(
    again.batch.data
      .filter((l) => !(again.batch.context_logline_ids ?? []).includes(l.logline_id))
      .map((l) => Number(l.verify_line)),
  );
  assert.deepEqual(
    broken.inTwoBatches,
    [...own].sort((a, b) => a - b),
    'its own lines, in two batches to the inspector',
  );
  assert.deepEqual(broken.monitoringMissing, [
    { table: 'failed_loglines', id: `rejected by dga_collector: ${firstInvalid}` },
  ]);
  assert.deepEqual(broken.monitoringTwice, [
    { table: 'loglines', id: `accepted by dga_collector: ${Number(copiedLine.verify_line)}` },
  ]);
  await pipeline.stop();
  pipeline = undefined;
});

/** Of `lines`, how many the DGA path's inspector finished, sent on, the detector scored and an alert carried. */
function dgaFates(read: PipelineRead, lines: readonly number[]): Record<string, number> {
  const path = buildLedger(read).paths.find((p) => p.layout.detector.endsWith('dga_detector'));
  if (!path) return {};
  const count = (has: (line: number) => boolean) => lines.filter(has).length;
  return {
    nxdomain: lines.length,
    normal: count((l) => (path.normal.get(l) ?? 0) > 0),
    suspicious: count((l) => (path.suspicious.get(l)?.length ?? 0) > 0),
    scored: count((l) => path.scored.has(l)),
    alerted: count((l) => (path.alerted.get(l) ?? 0) > 0),
  };
}
