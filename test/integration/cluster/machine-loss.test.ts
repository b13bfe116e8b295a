import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { LocalClickHouse } from '../../../src/dev/clickhouse-server.ts';
import { MachineNetwork } from '../../../src/dev/machine-network.ts';
import { projectRoot } from '../../../src/dev/paths.ts';
import { machineLossText, runMachineLoss } from '../../../src/verify/cluster/machine-loss.ts';

/**
 * `npm run test:cluster` (also in test:long, LONG_ONLY): the pipeline on three simulated machines
 * (network namespaces on one bridge, a KRaft node and every stage on each), one machine cut off for
 * 25 s (the session timeout is 6 s) while seeded traffic flows, then reconnected. Its own
 * ClickHouse and machines on ports 27500-27599 (HAMSTRING_CLUSTER_PORT_BASE moves them: two runs at
 * once need bases that differ modulo 256, the machines' subnet is 10.214.(base+92 mod 256).0/24).
 */
const BASE = Number(process.env.HAMSTRING_CLUSTER_PORT_BASE ?? 27_500);
const CUT_FOR_MS = 25_000;
const unavailable = MachineNetwork.unavailableReason();

test(
  'a machine cut off for longer than the session timeout: its partitions move to the survivors and back, every line reaches exactly one fate, every alert once',
  { skip: unavailable, timeout: 1_500_000 },
  async () => {
    const dir = join(projectRoot, 'var', 'test', 'cluster-machine-loss');
    const clickhouseDir = join(dir, '..', 'cluster-clickhouse');
    // A fresh database: logline ids derive from input positions, so an earlier run's rows would
    // show as this run's rows twice.
    rmSync(clickhouseDir, { recursive: true, force: true });
    const clickhouse = await LocalClickHouse.start({
      dataDir: clickhouseDir,
      httpPort: BASE,
      tcpPort: BASE + 1,
    });
    try {
      const report = await runMachineLoss({
        tag: BASE + 92,
        dir,
        brokerPort: BASE + 92,
        clickhouse,
        database: 'cluster_machine_loss',
        baseConfig: join(projectRoot, 'config.yaml'),
        // One chain (DGA) on every machine: 6 stage processes each, 18 in all, on two cores.
        drop: ['tunnel_prefilter', 'tunnel_inspector', 'domainator'],
        partitions: 6,
        // 96 hosts are six /24 subnets (the collector's partition key): lines on several collectors.
        traffic: { seed: 7, hosts: 96, rate: 20, durationSeconds: 60, hostileEvery: 20 },
        feedMs: 90_000,
        lose: 'm2',
        cutAtMs: 20_000,
        cutForMs: CUT_FOR_MS,
        log: (line) => process.stderr.write(`${new Date().toISOString()} ${line}\n`),
      });
      const text = machineLossText(report);
      process.stdout.write(`${text}\n`);
      assert.deepEqual(report.problems, [], text);
      const a = report.accounting;
      assert.equal(a.lost.length, 0, text);
      assert.equal(a.inTwoBatches.length, 0, text);
      assert.equal(a.alertsTwice.length, 0, text);
      assert.ok(a.monitoringChecked, text);
      assert.equal(a.monitoringMissing.length + a.monitoringTwice.length, 0, text);
      assert.equal(a.fates.rejected, report.invalidLines, text);
      for (const m of report.moves) {
        assert.ok(m.offMs !== undefined && m.offMs < CUT_FOR_MS, `${m.label} moved during the cut:\n${text}`);
        assert.ok(m.backMs !== undefined, `${m.label} moved back:\n${text}`);
      }
    } finally {
      await clickhouse.stop();
    }
  },
);
