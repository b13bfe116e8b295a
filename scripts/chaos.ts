/**
 * The full chaos suite (`npm run chaos`): every verification scenario with 100,000 records per
 * scenario, first on a local 1-node cluster (worker faults, the chain, the abort hook, broker
 * SIGSTOP 5/30/90 s, network cuts 5/30/90 s when run as root), then on a local 3-node cluster
 * (clean restarts, hard bounces, transaction coordinators stopped mid-commit, the random soak).
 * One cluster at a time, base port 23092, data in var/verify/kafka-<n>; each is stopped after its
 * phase. Reports: var/verify/chaos/<time>/{1-node,3-node}/summary.md.
 *
 *   node --import tsx scripts/chaos.ts [--records N] [--workers M] [--soak-seconds S] [--only a,b]
 *
 * Exit code 0 when every scenario held exactly-once, 4 otherwise.
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { LocalKafkaCluster } from '../src/dev/kafka-cluster.ts';
import { defaultVarDir } from '../src/dev/paths.ts';
import { markdownTable, type ScenarioReport } from '../src/verify/report.ts';
import { runVerify } from '../src/verify/run.ts';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    workers: { type: 'string', default: '2' },
    'soak-seconds': { type: 'string', default: '180' },
    only: { type: 'string' },
  },
});
const PHASES: { local: 1 | 3; scenarios: string[] }[] = [
  {
    local: 1,
    scenarios: [
      'abort-hook',
      'oversized-outputs',
      'chain',
      'worker-sigterm',
      'worker-kill',
      'worker-stall',
      'scale',
      'broker-sigstop',
      'network-cut',
    ],
  },
  { local: 3, scenarios: ['broker-restart', 'broker-bounce', 'coordinator-sigstop', 'soak'] },
];
const only = values.only?.split(',');
const root = defaultVarDir(join('verify', 'chaos', new Date().toISOString().replace(/[:.]/g, '-')));
const log = (line: string): void =>
  void process.stderr.write(`[chaos ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

const all: ScenarioReport[] = [];
for (const phase of PHASES) {
  const names = phase.scenarios.filter((s) => !only || only.includes(s));
  if (names.length === 0) continue;
  try {
    const { reports } = await runVerify({
      local: phase.local,
      records: Number(values.records),
      workers: Number(values.workers),
      scenarios: names,
      reportDir: join(root, `${phase.local}-node`),
      soakMs: Number(values['soak-seconds']) * 1000,
      log,
    });
    all.push(...reports);
  } finally {
    await LocalKafkaCluster.attach(defaultVarDir(join('verify', `kafka-${phase.local}`)))?.stop();
  }
}
process.stdout.write(`${markdownTable(all)}\n\nreports in ${root}\n`);
process.exit(all.every((r) => r.ok) ? 0 : 4);
