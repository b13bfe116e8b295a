import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname, join } from 'node:path';
import { projectRoot } from '../../dev/paths.ts';
import type { PipelineComponent } from '../../stages/index.ts';

/** Every process alive, so that none outlives the verifier (exit handler below). */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

/** One pipeline process: a stage component (`hamstring run`) or the monitoring agent. */
export interface ProcessSpec {
  /** `collector dga_collector`, `agent`: names the process in the report and the logs. */
  readonly label: string;
  readonly args: readonly string[];
  /** A command the process runs through (`ip netns exec <ns>`: a network namespace of its own). */
  readonly prefix?: readonly string[];
  /** Environment of this process only (the broker's address as seen from its namespace). */
  readonly env?: Readonly<Record<string, string>>;
}

/** The `hamstring run` of a component, and the agent's `hamstring monitoring run`. */
export function componentProcess(c: PipelineComponent, configPath: string): ProcessSpec {
  return {
    label: c.name === c.kind ? c.kind : `${c.kind} ${c.name}`,
    args: ['run', c.kind, '--name', c.name, '--config', configPath, '--create-topics'],
  };
}

export function agentProcess(configPath: string): ProcessSpec {
  return { label: 'agent', args: ['monitoring', 'run', '--config', configPath] };
}

/**
 * The pipeline as separate processes, as an operator runs them, each restartable under the same
 * instance id (so a restarted stage fences its predecessor's transactions). They start through
 * `bin/hamstring`, which execs node in its own place (pool size, jemalloc, young generation set as an
 * operator's command sets them): SIGSTOP and kill -9 then hit the process that holds the Kafka
 * clients, with no launcher between.
 */
export class PipelineProcesses {
  readonly #children = new Map<string, ChildProcess>();
  readonly #specs = new Map<string, ProcessSpec>();
  readonly #log: WriteStream;
  /** Each process's own log (`logs/<label>.log` beside the common one), over all its restarts. */
  readonly #own = new Map<string, WriteStream>();
  readonly #ownDir: string;
  /** Exits nobody asked for (code, signal), by label: a stage that died by itself. */
  readonly unexpectedExits: { label: string; code: number | null; signal: string | null; at: number }[] = [];
  readonly #expected = new Set<ChildProcess>();

  constructor(
    specs: readonly ProcessSpec[],
    logFile: string,
    private readonly env: NodeJS.ProcessEnv = {},
  ) {
    for (const s of specs) this.#specs.set(s.label, s);
    this.#log = createWriteStream(logFile, { flags: 'a' });
    // The log is a diagnostic: a full disk must not end the verification.
    this.#log.on('error', () => undefined);
    this.#ownDir = join(dirname(logFile), 'logs');
  }

  #ownLog(label: string): WriteStream {
    let log = this.#own.get(label);
    if (log === undefined) {
      mkdirSync(this.#ownDir, { recursive: true });
      log = createWriteStream(join(this.#ownDir, `${label.replace(/\s+/g, '-')}.log`), { flags: 'a' });
      log.on('error', () => undefined);
      this.#own.set(label, log);
    }
    return log;
  }

  labels(): string[] {
    return [...this.#specs.keys()];
  }

  startAll(): void {
    for (const label of this.#specs.keys()) this.start(label);
  }

  start(label: string): void {
    const spec = this.#specs.get(label);
    if (!spec) throw new Error(`no pipeline process ${label}`);
    // `ip netns exec` execs too: a namespaced stage is still the one process that signals hit.
    const [command, ...prefixArgs] = [...(spec.prefix ?? []), join(projectRoot, 'bin', 'hamstring')];
    const child = spawn(command ?? join(projectRoot, 'bin', 'hamstring'), [...prefixArgs, ...spec.args], {
      cwd: projectRoot,
      env: {
        ...process.env,
        HAMSTRING_LOG_LEVEL: process.env.HAMSTRING_VERIFY_WORKER_LOG_LEVEL ?? 'warn',
        HAMSTRING_INSTANCE_ID: label.replace(/\s+/g, '-'),
        ...this.env,
        ...spec.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    live.add(child);
    this.#children.set(label, child);
    // Written, not piped: a pipe per stream and restart piles listeners on the one log stream.
    // A child's last output may come after its exit, and after stopAll ended the log.
    const own = this.#ownLog(label);
    const note = (text: string) =>
      void (own.writableEnded || own.write(`[verify] ${new Date().toISOString()} ${text}\n`));
    note(`started ${label} (pid ${child.pid ?? '?'})`);
    const write = (chunk: Buffer) => {
      if (!this.#log.writableEnded) this.#log.write(chunk);
      if (!own.writableEnded) own.write(chunk);
    };
    child.stdout.on('data', write);
    child.stderr.on('data', write);
    child.once('exit', (code, signal) => {
      note(
        `${label} exited: code ${code}, signal ${signal}${this.#expected.has(child) ? '' : ' (unexpected)'}`,
      );
      live.delete(child);
      if (!this.#expected.has(child)) this.unexpectedExits.push({ label, code, signal, at: Date.now() });
    });
  }

  /** The running process's pid (the pipeline's own, also behind `ip netns exec`, which execs it). */
  pid(label: string): number | undefined {
    return this.isRunning(label) ? this.#children.get(label)?.pid : undefined;
  }

  isRunning(label: string): boolean {
    const c = this.#children.get(label);
    return c !== undefined && c.exitCode === null && c.signalCode === null;
  }

  /** Sends `signal` and waits until the process is gone (SIGTERM: SIGKILL after `timeoutMs`). */
  async stop(label: string, signal: 'SIGTERM' | 'SIGKILL', timeoutMs = 60_000): Promise<void> {
    const child = this.#children.get(label);
    if (!child || !this.isRunning(label)) return;
    this.#expected.add(child);
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // A stopped process must run again to act on SIGTERM.
    child.kill('SIGCONT');
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    await gone;
    clearTimeout(timer);
  }

  /** kill -9, then the same process again. */
  async restart(label: string, signal: 'SIGTERM' | 'SIGKILL' = 'SIGKILL'): Promise<void> {
    await this.stop(label, signal);
    this.start(label);
  }

  signal(label: string, signal: 'SIGSTOP' | 'SIGCONT'): void {
    this.#children.get(label)?.kill(signal);
  }

  /** SIGTERM to every stage (their last transactions commit); the agent runs on. */
  async stopStages(): Promise<void> {
    await Promise.all(
      this.labels()
        .filter((l) => !this.#isAgent(l))
        .map((l) => this.stop(l, 'SIGTERM')),
    );
  }

  #isAgent(label: string): boolean {
    return this.#specs.get(label)?.args[0] === 'monitoring';
  }

  /** SIGTERM to every stage, then to the agent: rows of the stages' last transactions get copied. */
  async stopAll(): Promise<void> {
    await this.stopStages();
    await Promise.all(
      this.labels()
        .filter((l) => this.#isAgent(l))
        .map((l) => this.stop(l, 'SIGTERM')),
    );
    if (!this.#log.writableEnded) this.#log.end();
    for (const log of this.#own.values()) if (!log.writableEnded) log.end();
  }
}
