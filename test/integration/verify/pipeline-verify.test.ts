import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { projectRoot } from '../../../src/dev/paths.ts';
import { NetworkNamespace } from '../../../src/dev/network-namespace.ts';
import { FAULT_KINDS } from '../../../src/verify/pipeline/faults.ts';
import { pipelineVerdictText, verifyPipeline } from '../../../src/verify/pipeline/verify-pipeline.ts';
import { longOr } from '../../helpers/long-run.ts';

/**
 * `hamstring verify --pipeline --seed 1` in `npm run test:long` (scripts/run-integration-tests.ts,
 * LONG_ONLY), on 30 s of traffic when the file is named alone.
 */
const TRAFFIC = longOr(
  { hosts: 24, rate: 60, durationSeconds: 30, hostileEvery: 20 },
  { hosts: 40, rate: 100, durationSeconds: 60, hostileEvery: 20 },
);

// Where namespaces are refused, every fault but the network cut (the report says why).
const noCut = NetworkNamespace.unavailableReason();
const expectedKinds = FAULT_KINDS.filter((k) => noCut === undefined || k !== 'network-cut');

test(`hamstring verify --pipeline --seed 1 (${TRAFFIC.durationSeconds} s of traffic): every line in exactly one fate through kill -9 of every stage and the agent, a SIGSTOP, a stage's network cut${noCut ? ` (skipped: ${noCut})` : ''}, broker and ClickHouse kill -9; the same hosts alerted as without faults`, async () => {
  const verdict = await verifyPipeline({
    seed: 1,
    traffic: TRAFFIC,
    feedMs: TRAFFIC.durationSeconds * 1000,
    workDir: join(projectRoot, 'var', 'test', 'verify-pipeline'),
    // Its own broker and ClickHouse (it kills both), on ports no other file uses.
    kafkaBasePort: 26_092,
    clickhouseHttpPort: 26_192,
    clickhouseTcpPort: 26_193,
    baseConfig: join(projectRoot, 'config.yaml'),
    inspectors: 'shipped',
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const text = pipelineVerdictText(verdict);
  process.stdout.write(`${text}\n`);
  const kinds = new Set(verdict.faulted.faults.filter((f) => f.error === undefined).map((f) => f.kind));
  assert.deepEqual([...kinds].sort(), [...expectedKinds].sort(), `every kind of fault injected:\n${text}`);
  assert.equal(verdict.faulted.networkCutSkipped, noCut, text);
  assert.deepEqual(verdict.problems, [], text);
  for (const run of [verdict.baseline, verdict.faulted]) {
    const a = run.accounting;
    assert.equal(a.lost.length, 0, text);
    assert.equal(a.inTwoBatches.length, 0, text);
    assert.equal(a.batchesInspectedTwice.length, 0, text);
    assert.equal(a.alertsTwice.length, 0, text);
    assert.ok(a.monitoringChecked, 'ClickHouse was read');
    assert.equal(a.monitoringMissing.length + a.monitoringTwice.length, 0, text);
    assert.equal(a.fates.rejected, run.invalidLines, text);
    assert.ok(run.invalidLines > 0);
    assert.ok(a.fates.alerted > 0, `some lines are part of an alert:\n${text}`);
  }
  assert.ok(verdict.alertedHostsEqual, text);
  assert.ok(verdict.faulted.accounting.alertedHosts.length > 0, text);
  assert.ok(verdict.ok);
});
