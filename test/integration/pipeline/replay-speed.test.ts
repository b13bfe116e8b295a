import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startPipeline, type RunningPipeline } from '../../../src/app/pipeline.ts';
import type { TransactionalWorker } from '../../../src/runtime/index.ts';
import { silentLogger } from '../../../src/observability/logger.ts';
import { decodeOutgoingAlert } from '../../../src/stages/alerter/index.ts';
import { generateTraffic, type GeneratedLine } from '../../../src/traffic/index.ts';
import { createReadCommittedReader } from '../../../src/kafka/read-committed-reader.ts';
import { testClickHouse } from '../../helpers/clickhouse-fixture.ts';
import { startPrivateKafka } from '../../helpers/private-kafka.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { pipelineTestConfig, produceLines, resetBroker } from './support.ts';

let bootstrap: string;
let clickhousePort: number;
let pipeline: RunningPipeline | undefined;
const QUIET = { ...process.env, HAMSTRING_LOG_LEVEL: 'warn' };

let kafka: Awaited<ReturnType<typeof startPrivateKafka>> | undefined;
// A broker of its own: the shipped config's fixed group and changelog names then meet no other
// file's, so this file runs beside others instead of in the serial pipeline lane.
before(async () => {
  const [k, clickhouse] = await Promise.all([startPrivateKafka('replay-speed'), testClickHouse()]);
  kafka = k;
  bootstrap = k.bootstrap;
  clickhousePort = Number(new URL(clickhouse.url).port);
});
after(async () => {
  await pipeline?.stop();
  await kafka?.stop();
});

const WINDOW_MS = 300_000;
// Four minutes of traffic that cross a window boundary 100 s in, ending well in the past.
const startMs = Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS - 2 * WINDOW_MS - 100_000;
const traffic = generateTraffic({ seed: 5, rate: 80, durationSeconds: 240, hosts: 48, startMs });
const lines = [...traffic.lines()];
const infected = traffic.truth
  .filter((h) => h.role === 'dga')
  .map((h) => h.ip)
  .sort();

interface Run {
  /** `fast`: every line at once; `paced`: 12 slices of 20 s of event time, one a second. */
  readonly speed: 'fast' | 'paced';
  /** The collectors' `batch_timeout` (seconds); the batch size is never the bound. */
  readonly batchTimeout: number;
}

/** The alerts (host and id) of one replay through a fresh pipeline (topics, groups and state). */
async function replay(run: Run): Promise<{ hosts: string[]; ids: string[] }> {
  await resetBroker(bootstrap);
  const { config } = pipelineTestConfig({
    bootstrap,
    clickhousePort,
    edit: (tree) => {
      const p = tree.pipeline as Record<string, Record<string, unknown>>;
      const batches = p.log_collection!.default_batch_handler_config as Record<string, unknown>;
      batches.batch_timeout = run.batchTimeout;
      batches.batch_size = 1_000_000;
      // Every batch to the detector: the StreamAD inspector forwards, per call, all decided lines
      // of a host that has one anomalous bin among them, so what reaches the detector depends on
      // how the lines were batched (see the report of this test's commit).
      for (const inspector of p.data_inspection as unknown as Record<string, unknown>[])
        inspector.inspector_class_name = 'NoInspector';
      for (const detector of p.data_analysis as unknown as Record<string, unknown>[])
        detector.warning_window_seconds = WINDOW_MS / 1000;
    },
  });
  pipeline = await startPipeline({
    config,
    partitions: 3,
    log: silentLogger(),
    agent: { database: `replay_${run.speed}_${String(run.batchTimeout).replace('.', '_')}_${Date.now()}` },
    env: QUIET,
  });
  const keyOf = (_: unknown, i: number, part: readonly GeneratedLine[]) => part[i]?.srcIp ?? null;
  const produce = (part: readonly GeneratedLine[]) =>
    produceLines(
      bootstrap,
      'hamstring_input-dns',
      part.map((l) => l.line),
      (v, i) => keyOf(v, i, part),
    );
  if (run.speed === 'fast') await produce(lines);
  else
    for (let slice = 0; slice < 12; slice += 1) {
      const began = Date.now();
      await produce(lines.filter((l) => Math.floor((l.atMs - startMs) / 20_000) === slice));
      await new Promise((r) => setTimeout(r, Math.max(0, 1_000 - (Date.now() - began))));
    }
  // Every alert is written once the pipeline has gone quiet: no stage consumes for longer than the
  // collectors hold a batch. (Reading until each infected host had one alert, and a fixed time,
  // missed a later window's alert when the fast replay ran slowly: one id fewer than the paced one.)
  await waitQuiet(pipeline.stages.workers, run.batchTimeout * 1000 + 5_000);
  const alerts = await readAlerts(config.pipeline.alerting.external_kafka_topic);
  await pipeline.stop();
  pipeline = undefined;
  // The DGA detector's windows are under test; the Domainator's chain alerts the tunnelling host.
  const dga = alerts.filter((a) => a.detector_name === 'dga_detector');
  return {
    hosts: [...new Set(dga.map((a) => a.src_ip))].sort(),
    ids: dga.map((a) => a.alert_id).sort(),
  };
}

/**
 * Waits until no stage has consumed a record for `quietMs` (at most 3 minutes). Commits are no
 * measure: the stages' timers commit on their own.
 */
async function waitQuiet(workers: readonly TransactionalWorker[], quietMs: number): Promise<void> {
  const consumed = async () => {
    let sum = 0;
    for (const w of workers)
      for (const v of (await w.metrics.records.get()).values) if (v.labels.direction === 'in') sum += v.value;
    return sum;
  };
  let last = await consumed();
  let since = Date.now();
  await waitFor(
    async () => {
      const now = await consumed();
      if (now !== last) [last, since] = [now, Date.now()];
      return Date.now() - since >= quietMs;
    },
    {
      timeoutMs: 180_000,
      intervalMs: 250,
      message: `no stage consuming for ${quietMs} ms`,
      observe: () => last,
    },
  );
}

/** Reads the whole external alert topic: until no alert has come for 5 s since the first one. */
async function readAlerts(topic: string) {
  const reader = createReadCommittedReader({ bootstrap, clientId: 'test-replay-alerts' });
  await reader.connect(30_000);
  reader.subscribe([topic]);
  const alerts: ReturnType<typeof decodeOutgoingAlert>[] = [];
  const deadline = Date.now() + 90_000;
  let lastAlertAt = Date.now();
  try {
    while (Date.now() < deadline && (alerts.length === 0 || Date.now() - lastAlertAt < 5_000)) {
      const records = await reader.consume(1000, 200);
      for (const r of records) alerts.push(decodeOutgoingAlert(r.value));
      if (records.length > 0) lastAlertAt = Date.now();
    }
  } finally {
    await reader.close(10_000);
  }
  return alerts;
}

test('one seeded log replayed fast in big batches and paced in small ones alerts the same hosts with the same ids: the infected ones', async () => {
  const runs: Run[] = [
    { speed: 'fast', batchTimeout: 5 },
    { speed: 'paced', batchTimeout: 0.5 },
  ];
  const results = [];
  for (const run of runs) results.push({ run, ...(await replay(run)) });
  for (const r of results) {
    assert.deepEqual(r.hosts, infected, `${r.run.speed}, batch_timeout ${r.run.batchTimeout}: alerted hosts`);
    assert.deepEqual(
      r.ids,
      results[0]!.ids,
      `${r.run.speed}, batch_timeout ${r.run.batchTimeout}: alert ids`,
    );
  }
});
