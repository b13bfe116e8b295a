/**
 * The pipeline's stages as separate `hamstring run` processes, the way a deployment runs them (one
 * process per stage, on one or several machines), for bench:pipeline's `--processes`. Each process
 * gets its own copy of the config with its own health port, and the bench reads its progress from
 * the worker's Prometheus series on /metrics.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify as toYaml } from 'yaml';
import { relaunchEnv, YOUNG_GENERATION_FLAG } from '../bin/threadpool.js';
import type { PipelineComponent } from '../src/stages/pipeline-components.ts';
import { procCpuSeconds } from './proc-cpu.ts';

/**
 * Sum over the stages of their consumer lag, the records the first stage consumed, and the records
 * all stages consumed (it still moves after every lag gauge read 0: see bench/pipeline.ts).
 */
export interface Progress {
  readonly lag: number;
  readonly firstIn: number;
  readonly allIn: number;
  /**
   * Per stage process (labelled as `pids()`), its memory as the process's own series report it;
   * absent where the stages share one process.
   */
  readonly memory?: ReadonlyMap<string, ProcessMemory>;
}

/** Bytes, from a stage's /metrics: V8's young and old generations as allocated, and Buffers. */
export interface ProcessMemory {
  readonly youngGeneration: number;
  readonly oldGeneration: number;
  readonly external: number;
}

export interface StageProcesses {
  /**
   * Spawns every stage but the first and waits until each serves /metrics (its worker built), then
   * spawns the first (the logserver) and resolves, once it serves /metrics too, with the last moment
   * (ms since the epoch) its /metrics did not answer yet. Its health server starts before its worker,
   * so the first stage had consumed nothing then: a round timed from that moment, with the input
   * written before, counts all of the pipeline's work and none of the seconds each process spends
   * loading its TypeScript sources.
   */
  started(timeoutMs: number): Promise<number>;
  /** How far the stages are, from each process's /metrics. */
  progress(): Promise<Progress>;
  /** CPU seconds the processes used so far (all their threads). */
  cpuSeconds(): number;
  /** The same per process, named `<kind>` or `<kind> <name>`. */
  cpuByStage(): Map<string, number>;
  /** The pid of each process this started (for `launch: 'relaunch'`, the launcher's), named as in cpuByStage. */
  pids(): Map<string, number>;
  /** SIGTERM, then waits for every process to exit. */
  stop(): Promise<void>;
}

/**
 * How a stage process is started:
 * - `direct` (default): `node --max-semi-space-size=32 bin/hamstring.js` with the environment the
 *   launcher would give, so the process that does the work is the one started (bench:pipeline reads
 *   its CPU);
 * - `exec`: the `bin/hamstring` command, which sets that environment and execs node in its own place;
 * - `relaunch`: `node bin/hamstring.js` without the pool size, which relaunches itself as a child and
 *   stays resident as its launcher (what every `hamstring` did before `bin/hamstring` existed).
 */
export type StageLaunch = 'direct' | 'exec' | 'relaunch';

export interface StageProcessOptions {
  readonly launch?: StageLaunch;
  /** More arguments for every `hamstring run`, e.g. `--create-topics`. */
  readonly extraArgs?: readonly string[];
}

interface Running {
  /** The components this process runs (one, unless the bench groups them). */
  readonly group: readonly PipelineComponent[];
  readonly child: ChildProcess;
  readonly port: number;
}

/**
 * One `hamstring run` per group of components (`hamstring run <kind> --name <name>` for a group of
 * one, `hamstring run <kind>:<name> ...` for more), each with `health_port` basePort + i; see
 * `started`. The first group holds the logserver.
 */
export function startStageProcesses(
  tree: Record<string, unknown>,
  groups: readonly (readonly PipelineComponent[])[],
  dir: string,
  basePort: number,
  options: StageProcessOptions = {},
): StageProcesses {
  const { launch = 'direct', extraArgs = [] } = options;
  const running: Running[] = [];
  const spawnStage = (group: readonly PipelineComponent[], i: number): Running => {
    const port = basePort + i;
    const file = join(dir, `config-${label(group).replaceAll(/[^\w.-]+/g, '-')}.yaml`);
    const runtime = { ...(tree.runtime as Record<string, unknown>), health_port: port, metrics: true };
    writeFileSync(file, toYaml({ ...tree, runtime }));
    const [only] = group;
    const stages =
      group.length === 1 && only ? [only.kind, '--name', only.name] : group.map((c) => `${c.kind}:${c.name}`);
    const args = ['run', ...stages, '--config', file, ...extraArgs];
    const quiet = { HAMSTRING_LOG_LEVEL: 'warn' };
    // Without the pool size in the environment, the command sets it (exec) or relaunches (relaunch).
    const { UV_THREADPOOL_SIZE: _pool, ...unset } = process.env;
    const stdio: ['ignore', 'inherit', 'inherit'] = ['ignore', 'inherit', 'inherit'];
    const child =
      launch === 'exec'
        ? spawn('bin/hamstring', args, { env: { ...unset, ...quiet }, stdio })
        : launch === 'relaunch'
          ? spawn(process.execPath, ['bin/hamstring.js', ...args], { env: { ...unset, ...quiet }, stdio })
          : // The pool size, young generation and allocator that bin/threadpool.js gives a relaunched
            // hamstring (the bench reads this process's own CPU, so it must not relaunch itself).
            spawn(process.execPath, [YOUNG_GENERATION_FLAG, 'bin/hamstring.js', ...args], {
              env: { ...relaunchEnv(process.env), ...quiet },
              stdio,
            });
    return { group, child, port };
  };

  async function stopAll(): Promise<void> {
    await Promise.all(
      running.map(
        (r) =>
          new Promise<void>((resolve) => {
            if (r.child.exitCode !== null || r.child.signalCode !== null) return resolve();
            r.child.once('exit', () => resolve());
            r.child.kill('SIGTERM');
          }),
      ),
    );
  }

  async function series(port: number): Promise<string> {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      return res.ok ? await res.text() : '';
    } catch {
      return ''; // not listening yet
    }
  }

  return {
    async started(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      /** Resolves, once `r` serves /metrics, with the time of the last request it did not answer. */
      const waitFor = async (r: Running): Promise<number> => {
        let notYet = Date.now();
        for (;;) {
          const asked = Date.now();
          if ((await series(r.port)) !== '') return notYet;
          if (r.child.exitCode !== null) throw new Error(`${label(r.group)} exited`);
          if (Date.now() > deadline) throw new Error(`${label(r.group)} did not start`);
          notYet = asked;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      };
      const [first, ...rest] = groups;
      if (!first) throw new Error('no stage to start');
      // `running` keeps the groups' order: progress() reads the logserver's records from index 0.
      running.push(...rest.map((c, i) => spawnStage(c, i + 1)));
      try {
        for (const r of running) await waitFor(r);
        const logserver = spawnStage(first, 0);
        running.unshift(logserver);
        return await waitFor(logserver);
      } catch (e) {
        // One stage that cannot start must not leave the others running against the next broker.
        await stopAll();
        throw e;
      }
    },
    async progress() {
      let lag = 0;
      let firstIn = 0;
      let allIn = 0;
      const memory = new Map<string, ProcessMemory>();
      for (const [i, r] of running.entries()) {
        const text = await series(r.port);
        memory.set(label(r.group), {
          youngGeneration: sum(text, /^nodejs_heap_space_size_total_bytes\{space="new"\} (\S+)$/gm),
          oldGeneration: sum(text, /^nodejs_heap_space_size_total_bytes\{space="old"\} (\S+)$/gm),
          external: sum(text, /^nodejs_external_memory_bytes (\S+)$/gm),
        });
        lag += sum(text, /^hamstring_worker_consumer_lag\{[^}]*\} (\S+)$/gm);
        const recordsIn = sum(text, /^hamstring_worker_records_total\{[^}]*direction="in"[^}]*\} (\S+)$/gm);
        if (i === 0)
          firstIn =
            r.group.length === 1
              ? recordsIn
              : sum(
                  text,
                  /^hamstring_worker_records_total\{(?=[^}]*stage="log_storage\.logserver")[^}]*direction="in"[^}]*\} (\S+)$/gm,
                );
        allIn += recordsIn;
      }
      return { lag, firstIn, allIn, memory };
    },
    cpuSeconds() {
      let total = 0;
      for (const r of running) total += procCpuSeconds(r.child.pid);
      return total;
    },
    cpuByStage() {
      return new Map(running.map((r) => [label(r.group), procCpuSeconds(r.child.pid)]));
    },
    pids() {
      const out = new Map<string, number>();
      for (const r of running) if (r.child.pid !== undefined) out.set(label(r.group), r.child.pid);
      return out;
    },
    stop: stopAll,
  };
}

function label(group: readonly PipelineComponent[]): string {
  if (group.length > 1) return `${group.length} stages in one process`;
  const [c] = group;
  return c === undefined ? 'none' : c.name === c.kind ? c.kind : `${c.kind} ${c.name}`;
}

function sum(text: string, pattern: RegExp): number {
  let total = 0;
  for (const m of text.matchAll(pattern)) total += Number(m[1]);
  return total;
}
