/**
 * Memory of the pipeline as an operator runs it: N HAMSTRING v2.0.0-format lines replayed through
 * the six stages as six `hamstring run` processes at the shipped settings (config.yaml as it is,
 * batch_timeout 30 s included) on a private 1-node broker, each process's RSS sampled from /proc
 * every 500 ms, launcher processes (a parent that relaunched `hamstring` as its child) apart.
 *
 *   node --import tsx bench/memory.ts [--lines 200000] [--launch exec|relaunch|direct] [--port 27092]
 *     [--health-port 29600] [--from build|source] [--one-process] [--keep-broker]
 *   npm run bench:memory -- --lines 50000
 *
 * --launch: how each stage process starts (bench/stage-processes.ts): `exec` (default) through the
 * `bin/hamstring` command, as npm installs it; `relaunch` through `node bin/hamstring.js`, which
 * relaunches itself and stays resident as the launcher (the only way before `bin/hamstring`).
 * --one-process: the same stages in one `hamstring run logserver collector:dga_collector ...` process
 * instead of a process each (a deployment that trades the stages' separate cores for memory).
 * --from: `build` (default) builds the bundle first (scripts/build.ts) and runs the stages from it,
 * `source` runs them from the TypeScript sources through tsx (HAMSTRING_FROM, bin/hamstring.js).
 *
 * The lines are in memory before the stages start (500 hosts, seed 5, event times an hour ago), and
 * written to the input topic once every stage serves /metrics. The run ends once the logserver has
 * read every line and for batch_timeout + 1 s no lag read above 0 and no stage consumed a record.
 * Printed: peak RSS per stage process (anonymous and file-backed), the largest V8 young and old
 * generation and Buffers each reported on its /metrics, peak RSS per launcher, the peak of their
 * sum (samples taken at the same moment) and of the stages' PSS (node's binary and libraries, mapped
 * by every process, counted once), and the stages' CPU seconds. The monitoring agent is not run
 * (its rows are written to Kafka in the stages' transactions as always).
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { validateConfig } from '../src/config/index.ts';
import { silentLogger } from '../src/observability/logger.ts';
import { pipelineComponents } from '../src/stages/pipeline-components.ts';
import { buildBundle } from '../scripts/build.ts';
import { benchLines, writeInput } from './input-lines.ts';
import { shippedSetup } from './shipped-setup.ts';
import { procCommand, processTree, procPssBytes, procRss, type Rss } from './proc-rss.ts';
import { startStageProcesses, type ProcessMemory, type StageLaunch } from './stage-processes.ts';

const { values: args } = parseArgs({
  options: {
    lines: { type: 'string', default: '200000' },
    'all-components': { type: 'boolean', default: false },
    launch: { type: 'string', default: 'exec' },
    port: { type: 'string', default: '27092' },
    'health-port': { type: 'string', default: '29600' },
    from: { type: 'string', default: 'build' },
    'keep-broker': { type: 'boolean', default: false },
    'one-process': { type: 'boolean', default: false },
  },
});
const LINES = Number(args.lines);
const LAUNCH = args.launch as StageLaunch;
if (!['exec', 'relaunch', 'direct'].includes(LAUNCH))
  throw new Error(`--launch ${LAUNCH}: exec, relaunch or direct`);
if (args.from !== 'build' && args.from !== 'source') throw new Error(`--from ${args.from}: build or source`);
if (args.from === 'build') await buildBundle();
// The stage processes inherit it (bench/stage-processes.ts passes this environment on).
process.env.HAMSTRING_FROM = args.from;
const SAMPLE_MS = 500;
/** Health ports of the stage processes: this one and the next five (below Linux's ephemeral range). */
const HEALTH_BASE_PORT = Number(args['health-port']);
const dir = join('var', 'bench', 'memory');
const MiB = 1024 * 1024;

/** Peak RSS per process role over the run, from samples of every process at the same moment. */
class RssPeaks {
  readonly stage = new Map<string, number>();
  /** Each stage process's resident set split at its peak. */
  readonly stageSplit = new Map<string, Rss>();
  readonly launcher = new Map<string, number>();
  readonly helper = new Map<string, number>();
  totalStages = 0;
  totalAll = 0;
  /** The peak of the stage processes' summed PSS: shared pages (node's binary) counted once. */
  totalStagesPss = 0;
  /** The collector's RSS at the sample where the stages' sum peaked. */
  collectorAtTotal = 0;
  readonly launcherCommands = new Set<string>();
  readonly helperCommands = new Set<string>();

  sample(pids: ReadonlyMap<string, number>): void {
    let stages = 0;
    let stagesPss = 0;
    let all = 0;
    let collector = 0;
    for (const [label, root] of pids) {
      const tree = processTree(root).map((pid) => {
        const split = procRss(pid);
        return { pid, command: procCommand(pid), rss: split.rss, split };
      });
      // The deepest `hamstring.js` process does the stage's work; one above it relaunched it (a
      // launcher); anything else the stage started is a helper (tsx's esbuild service).
      const hamstring = tree.filter((p) => p.command.includes('hamstring.js'));
      const stage = hamstring.at(-1);
      if (stage === undefined) continue;
      stages += stage.rss;
      stagesPss += procPssBytes(stage.pid);
      if (label.startsWith('collector')) collector = stage.rss;
      if (stage.rss > (this.stage.get(label) ?? 0)) {
        this.stage.set(label, stage.rss);
        this.stageSplit.set(label, stage.split);
      }
      let launchers = 0;
      let helpers = 0;
      for (const p of tree) {
        all += p.rss;
        if (p === stage) continue;
        if (hamstring.includes(p)) {
          launchers += p.rss;
          this.launcherCommands.add(p.command);
        } else {
          helpers += p.rss;
          this.helperCommands.add(p.command);
        }
      }
      if (launchers > 0) this.launcher.set(label, Math.max(this.launcher.get(label) ?? 0, launchers));
      if (helpers > 0) this.helper.set(label, Math.max(this.helper.get(label) ?? 0, helpers));
    }
    if (stages > this.totalStages) this.collectorAtTotal = collector;
    this.totalStages = Math.max(this.totalStages, stages);
    this.totalStagesPss = Math.max(this.totalStagesPss, stagesPss);
    this.totalAll = Math.max(this.totalAll, all);
  }
}

const mib = (bytes: number) => `${(bytes / MiB).toFixed(0)} MiB`;

const lines = benchLines(LINES, 'v2');
const lineBytes = lines.reduce((sum, l) => sum + Buffer.byteLength(l.line), 0);
console.log(
  `input: ${lines.length} v2.0.0 lines, ${(lineBytes / MiB).toFixed(1)} MiB (${(lineBytes / lines.length).toFixed(0)} bytes a line)`,
);

const { cluster, tree } = await shippedSetup(dir, Number(args.port));
const config = validateConfig(tree);
const batchTimeoutMs = config.pipeline.log_collection.default_batch_handler_config.batch_timeout * 1000;
// One process per stage (the first entry of each kind: the DGA path), as the issue measured; with
// --all-components every configured entry (the shipped config also has a tunnel path: nine).
const stageKinds = pipelineComponents(config).filter((c) => c.kind !== 'webhook' && c.kind !== 'syslog');
const components = args['all-components']
  ? stageKinds
  : stageKinds.filter((c, i) => stageKinds.findIndex((d) => d.kind === c.kind) === i);

const groups = args['one-process'] ? [components] : components.map((c) => [c]);
const processes = startStageProcesses(tree, groups, dir, HEALTH_BASE_PORT, {
  launch: LAUNCH,
  extraArgs: ['--create-topics'],
});
const peaks = new RssPeaks();
/** Per stage process, the largest of each part its /metrics reported during the replay. */
const heapPeaks = new Map<string, ProcessMemory>();
const sampler = setInterval(() => peaks.sample(processes.pids()), SAMPLE_MS);
try {
  console.log(
    `starting ${components.length} stages in ${groups.length} process(es) (--launch ${LAUNCH}, --from ${args.from})`,
  );
  await processes.started(300_000);
  const idle = new RssPeaks();
  idle.sample(processes.pids());
  console.log(`started; stage RSS before any line: ${mib(idle.totalStages)}`);
  const began = Date.now();
  const sent = await writeInput(config, lines, silentLogger());
  console.log(`input written in ${((Date.now() - began) / 1000).toFixed(1)} s`);
  let lastBusy = Date.now();
  let seenIn = -1;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, SAMPLE_MS));
    const now = await processes.progress();
    for (const [label, m] of now.memory ?? []) {
      const peak = heapPeaks.get(label) ?? { youngGeneration: 0, oldGeneration: 0, external: 0 };
      heapPeaks.set(label, {
        youngGeneration: Math.max(peak.youngGeneration, m.youngGeneration),
        oldGeneration: Math.max(peak.oldGeneration, m.oldGeneration),
        external: Math.max(peak.external, m.external),
      });
    }
    if (now.lag > 0 || now.firstIn < sent || now.allIn !== seenIn) lastBusy = Date.now();
    seenIn = now.allIn;
    if (Date.now() - lastBusy >= batchTimeoutMs + 1000) break;
    if (Date.now() - began > 900_000) throw new Error(`no end after 15 min: ${JSON.stringify(now)}`);
  }
  console.log(`replayed in ${((lastBusy - began) / 1000).toFixed(1)} s`);
  // What a setting that saves memory costs in CPU shows here (only --launch exec and direct
  // start the stage process itself; a relaunching launcher's own CPU is all it reads).
  const cpu = processes.cpuByStage();
  const cpuTotal = [...cpu.values()].reduce((sum, s) => sum + s, 0);
  console.log(
    `CPU of the stage processes: ${cpuTotal.toFixed(1)} s (${[...cpu].map(([l, s]) => `${l} ${s.toFixed(1)}`).join(', ')})`,
  );
} finally {
  clearInterval(sampler);
  await processes.stop();
  if (!args['keep-broker']) await cluster.stop();
}

console.log(`peak RSS per stage process (sampled every ${SAMPLE_MS} ms):`);
for (const [label, rss] of peaks.stage) {
  const split = peaks.stageSplit.get(label);
  const parts = split ? ` (anonymous ${mib(split.anon)}, file-backed ${mib(split.file)})` : '';
  console.log(`  ${label.padEnd(28)} ${mib(rss).padStart(8)}${parts}`);
}
console.log('largest V8 generations and Buffers per stage process (its /metrics, every 500 ms):');
for (const [label, m] of heapPeaks)
  console.log(
    `  ${label.padEnd(28)} young ${mib(m.youngGeneration).padStart(8)}, old ${mib(m.oldGeneration).padStart(8)}, Buffers ${mib(m.external).padStart(8)}`,
  );
if (peaks.launcher.size > 0) {
  console.log('peak RSS per launcher process (a parent that relaunched hamstring):');
  for (const [label, rss] of peaks.launcher) console.log(`  ${label.padEnd(28)} ${mib(rss).padStart(8)}`);
} else console.log('launcher processes: none');
if (peaks.helper.size > 0) {
  console.log(`peak RSS of other processes a stage started (${[...peaks.helperCommands].join(' | ')}):`);
  for (const [label, rss] of peaks.helper) console.log(`  ${label.padEnd(28)} ${mib(rss).padStart(8)}`);
}
console.log(
  `peak of the stages' total: ${mib(peaks.totalStages)} (collector then ${mib(peaks.collectorAtTotal)})`,
);
console.log(`peak of the total with launchers and helpers: ${mib(peaks.totalAll)}`);
console.log(`peak of the stages' total PSS (shared pages counted once): ${mib(peaks.totalStagesPss)}`);
