/**
 * Idle cost of stage processes: each given stage (or group of stages, joined with `+`) runs as a
 * `hamstring run` process at the shipped settings on a private 1-node broker with no input; once
 * they have settled, the bench prints the share of a core each process took over the measured
 * seconds, and the broker's. What a stage's figure in bench:pipeline's `--processes` rounds owes
 * to time rather than to lines.
 *
 *   node --import tsx bench/idle.ts [--stages alerter,detector:domainator,collector] [--settle 45] [--seconds 30] [--port 36100]
 *   npm run bench:idle -- --stages logserver+collector:dga_collector
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { stringify as toYaml } from 'yaml';
import { procCpuSeconds } from './proc-cpu.ts';
import { shippedSetup } from './shipped-setup.ts';

const { values: args } = parseArgs({
  options: {
    stages: { type: 'string', default: 'alerter,detector:domainator,collector' },
    settle: { type: 'string', default: '45' },
    seconds: { type: 'string', default: '30' },
    port: { type: 'string', default: '36100' },
  },
});
const groups = args.stages.split(',').map((g) => g.split('+'));
const settleMs = Number(args.settle) * 1000;
const seconds = Number(args.seconds);

const dir = join('var', 'bench', 'idle');
const { cluster, tree } = await shippedSetup(dir, Number(args.port));
const configPath = join(dir, 'config.yaml');
writeFileSync(configPath, toYaml(tree));

const children = groups.map((stages) =>
  spawn('bin/hamstring', ['run', ...stages, '--config', configPath, '--create-topics'], {
    env: { ...process.env, HAMSTRING_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  }),
);
try {
  console.log(`${groups.length} process(es) started; settling for ${args.settle} s`);
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  for (const [i, child] of children.entries())
    if (child.exitCode !== null) throw new Error(`${groups[i]!.join(' ')} exited with ${child.exitCode}`);
  const broker = cluster.pidOf(1);
  const before = children.map((c) => procCpuSeconds(c.pid));
  const brokerBefore = procCpuSeconds(broker);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  console.log(`idle CPU over ${seconds} s, as a share of one core:`);
  for (const [i, child] of children.entries()) {
    const share = (procCpuSeconds(child.pid) - before[i]!) / seconds;
    console.log(`  ${groups[i]!.join(' ').padEnd(40)} ${(share * 100).toFixed(1)} %`);
  }
  console.log(
    `  ${'broker'.padEnd(40)} ${(((procCpuSeconds(broker) - brokerBefore) / seconds) * 100).toFixed(1)} %`,
  );
} finally {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => (c.exitCode !== null ? resolve() : c.once('exit', () => resolve()))),
    ),
  );
  await cluster.stop();
}
