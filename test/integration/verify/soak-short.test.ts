import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { LocalClickHouse } from '../../../src/dev/clickhouse-server.ts';
import { NetworkNamespace } from '../../../src/dev/network-namespace.ts';
import { projectRoot } from '../../../src/dev/paths.ts';
import { FAULT_KINDS } from '../../../src/verify/pipeline/faults.ts';
import { runSoak } from '../../../src/verify/pipeline/soak.ts';
import { writeSoakReport } from '../../../src/verify/pipeline/soak-report.ts';

/**
 * The short variant of `npm run soak`: 40 s of traffic with every kind of fault once (one stage
 * killed -9, not each), sampled every 5 s, on a broker and ClickHouse of its own (it kills both),
 * ports no other file uses. The run ends only when every stage group has read its inputs to the end
 * (the settle step), so a stage killed late must have come back for the verdict to pass.
 */
const dir = join(projectRoot, 'var', 'test', 'soak-short');
let clickhouse: LocalClickHouse | undefined;
before(async () => {
  clickhouse = await LocalClickHouse.start({
    dataDir: join(dir, 'clickhouse'),
    httpPort: 26_292,
    tcpPort: 26_293,
  });
});
after(async () => {
  await clickhouse?.stop();
});

const noCut = NetworkNamespace.unavailableReason();

test('a short soak samples every process every 5 s, injects every kind of fault, and the lag comes back after each', async () => {
  if (!clickhouse) throw new Error('no ClickHouse');
  const run = await runSoak({
    seed: 2,
    hosts: 40,
    rate: 60,
    minutes: 40 / 60,
    hostileEvery: 20,
    sampleMs: 5_000,
    oneStageKill: true,
    dir: join(dir, 'run'),
    kafkaBasePort: 26_282,
    clickhouse,
    database: 'soak_short',
    baseConfig: join(projectRoot, 'config.yaml'),
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const report = writeSoakReport(join(dir, 'report'), run);
  const text = report.text;
  const kinds = new Set(run.faults.filter((f) => f.error === undefined).map((f) => f.kind));
  assert.deepEqual(
    [...kinds].sort(),
    FAULT_KINDS.filter((k) => noCut === undefined || k !== 'network-cut').sort(),
    text,
  );
  const labels = new Set(run.samples.flatMap((s) => s.processes.map((p) => p.label)));
  assert.equal(labels.size, 10, `9 stage processes and the agent sampled: ${[...labels].join(', ')}`);
  assert.ok(run.samples.length >= 8, `${run.samples.length} samples`);
  const gaps = run.samples.slice(1).map((s, i) => s.atMs - (run.samples[i]?.atMs ?? 0));
  assert.ok(
    gaps.every((g) => g >= 4_500 && g <= 10_000),
    `a sample about every 5 s: ${gaps.join(', ')}`,
  );
  assert.ok(
    run.samples.every((s) => s.processes.every((p) => p.rssMiB > 20)),
    'RSS read from /proc',
  );
  assert.ok(run.linesFed > 2_000, `${run.linesFed} lines fed`);
  assert.ok(run.alerts.length > 0, 'alerts with their latency');
  assert.ok(
    run.alerts.every((a) => a.latencyMs >= 0 && a.latencyMs < 120_000),
    text,
  );
  for (const name of ['soak.md', 'soak.json', 'rss.svg', 'cpu.svg', 'lag.svg', 'latency.svg'])
    assert.ok(existsSync(join(dir, 'report', name)), name);
  assert.match(readFileSync(join(dir, 'report', 'lag.svg'), 'utf8'), /<path d="M/);
  assert.ok(report.ok, text);
});
