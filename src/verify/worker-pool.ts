import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { sourcePath } from '../assets/project.ts';
import { projectRoot } from '../dev/paths.ts';
import type { WorkerEvent } from './worker-events.ts';

// Always the source, run through tsx below, also when the verifier runs from the bundle.
const WORKER_MAIN = sourcePath('verify/worker-main.ts');

/** Every worker process alive, so that no worker outlives the verifier (exit handler below). */
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

/** How every worker of one stage group is started. */
export interface WorkerGroupSpec {
  bootstrap: string;
  input: string;
  output: string;
  group: string;
  batchSize: number;
  batchDelayMs: number;
  abortRatio: number;
  seed: number;
  maxPollMs: number;
  stallMs: number;
  /** Every n-th sequence number is output too large for Kafka (see oversized.ts); 0 or absent: none. */
  oversizedEvery?: number;
  /** Worker stderr (JSON logs) is appended here. */
  logFile: string;
  /** Runs each worker through this command prefix (`ip netns exec <ns>`: a network namespace). */
  execPrefix?: readonly string[];
}

/** A commit as the orchestrator saw it, with the wall-clock time the worker wrote it. */
export interface CommitEvent {
  at: number;
  records: number;
  group: string;
  instance: string;
}

/**
 * The child processes of one stage group. A restarted instance keeps its instance id (so its
 * transactional id too, and it fences its zombie), as a restarted pod would.
 */
export class WorkerGroup {
  readonly commits: CommitEvent[] = [];
  readonly abortedAttempts = new Set<string>();
  readonly committedAttempts = new Set<string>();
  /** Committed records per instance since its last (re)start. */
  readonly progress = new Map<string, number>();
  readonly exits: { instance: string; code: number | null; signal: string | null; at: number }[] = [];
  /** Restarts after a worker exited because it was not live (hung): a liveness bug, not a fault. */
  readonly livenessRestarts: { instance: string; at: number }[] = [];
  /** How often the workers ran each recovery (`WorkerEvent` 'recovery'). */
  readonly recoveries = new Map<string, number>();
  readonly #children = new Map<string, ChildProcess>();
  #closed = false;
  readonly #unhealthy = new Set<string>();
  readonly #log: WriteStream;
  #stalls = 0;
  #fullSpeed = false;

  constructor(readonly spec: WorkerGroupSpec) {
    this.#log = createWriteStream(spec.logFile, { flags: 'a' });
  }

  get stalls(): number {
    return this.#stalls;
  }

  instances(): string[] {
    return [...this.#children.keys()];
  }

  isRunning(instance: string): boolean {
    const c = this.#children.get(instance);
    return c !== undefined && c.exitCode === null && c.signalCode === null;
  }

  committedRecords(): number {
    return this.commits.reduce((n, c) => n + c.records, 0);
  }

  start(instance: string): void {
    if (this.isRunning(instance)) return;
    const s = this.spec;
    const [command, ...prefixArgs] = [...(s.execPrefix ?? []), process.execPath];
    const child = spawn(command, [...prefixArgs, '--import', 'tsx', WORKER_MAIN], {
      cwd: projectRoot,
      env: {
        ...process.env,
        UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '16',
        HAMSTRING_LOG_LEVEL: process.env.HAMSTRING_VERIFY_WORKER_LOG_LEVEL ?? 'warn',
        BOOTSTRAP: s.bootstrap,
        INPUT: s.input,
        OUTPUT: s.output,
        GROUP: s.group,
        INSTANCE: instance,
        BATCH_SIZE: String(s.batchSize),
        BATCH_DELAY_MS: String(this.#fullSpeed ? 0 : s.batchDelayMs),
        ABORT_RATIO: String(s.abortRatio),
        SEED: String(s.seed),
        MAX_POLL_MS: String(s.maxPollMs),
        STALL_MS: String(s.stallMs),
        OVERSIZED_EVERY: String(s.oversizedEvery ?? 0),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    // A worker that died before reading its stdin must not fail the verifier with EPIPE.
    child.stdin.on('error', () => undefined);
    this.#children.set(instance, child);
    live.add(child);
    this.progress.set(instance, 0);
    child.stderr.pipe(this.#log, { end: false });
    createInterface({ input: child.stdout }).on('line', (line) => this.#onLine(instance, line));
    child.once('exit', (code, signal) => {
      live.delete(child);
      this.exits.push({ instance, code, signal, at: Date.now() });
    });
    // 'close' comes after the last stdout line was read, so an `unhealthy` report is never missed.
    child.once('close', () => {
      // The supervisor: a worker that failed its liveness check is restarted (same instance id).
      if (this.#unhealthy.delete(instance) && !this.#closed && !this.isRunning(instance)) {
        this.livenessRestarts.push({ instance, at: Date.now() });
        this.start(instance);
      }
    });
  }

  /** Sends the signal and waits until the process is gone (SIGTERM: a clean stop, bounded). */
  async stop(instance: string, signal: 'SIGTERM' | 'SIGKILL', timeoutMs = 60_000): Promise<void> {
    const child = this.#children.get(instance);
    if (!child || !this.isRunning(instance)) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    await gone;
    clearTimeout(timer);
  }

  /** Lifts the throttle of every worker, running or started later (`full-speed` on stdin). */
  fullSpeed(): void {
    this.#fullSpeed = true;
    for (const instance of this.instances())
      if (this.isRunning(instance)) this.#children.get(instance)?.stdin?.write('full-speed\n');
  }

  signal(instance: string, signal: 'SIGUSR2' | 'SIGSTOP' | 'SIGCONT'): void {
    this.#children.get(instance)?.kill(signal);
  }

  async stopAll(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    await Promise.all(this.instances().map((i) => this.stop(i, signal)));
  }

  close(): void {
    this.#closed = true;
    for (const [, c] of this.#children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    this.#log.end();
  }

  #onLine(instance: string, line: string): void {
    let e: WorkerEvent;
    try {
      e = JSON.parse(line) as WorkerEvent;
    } catch {
      return;
    }
    switch (e.e) {
      case 'commit':
        this.commits.push({ at: e.at, records: e.records, group: this.spec.group, instance });
        this.committedAttempts.add(e.attempt);
        this.progress.set(instance, (this.progress.get(instance) ?? 0) + e.records);
        break;
      case 'abort':
        this.abortedAttempts.add(e.attempt);
        break;
      case 'unhealthy':
        this.#unhealthy.add(instance);
        break;
      case 'stall':
        this.#stalls += 1;
        break;
      case 'recovery':
        this.recoveries.set(e.what, (this.recoveries.get(e.what) ?? 0) + 1);
        break;
      default:
        break;
    }
  }
}
