import { availableParallelism } from 'node:os';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SerializedError, TaskReply, ThreadPoolWorkerData } from './thread-pool-worker.ts';
import { entryModule } from '../assets/project.ts';
import { HamstringError } from '../errors/hamstring-error.ts';

/** Options of {@link ThreadPool}. */
export interface ThreadPoolOptions {
  /**
   * The task module: its default export is `(input) => output | Promise<output>`. A file URL, an
   * absolute or cwd-relative path, or any URL `import()` accepts (`data:` included). TypeScript
   * modules (.ts, .mts, .cts) are loaded through tsx.
   */
  module: URL | string;
  /** Threads at most, started on demand. Default min(2, availableParallelism()). */
  size?: number;
}

/** Rejection of tasks still queued or running when {@link ThreadPool.close} is called. */
export class ThreadPoolClosedError extends HamstringError {
  override readonly name = 'ThreadPoolClosedError';
  readonly code = 'THREAD_POOL_CLOSED';
}

interface Task {
  input: unknown;
  signal: AbortSignal | undefined;
  resolve(output: unknown): void;
  reject(reason: unknown): void;
  onAbort: () => void;
}

interface Slot {
  worker: Worker;
  task: Task | undefined;
}

const TS_EXTENSIONS = new Set(['.ts', '.mts', '.cts']);

/*
 * Plain JavaScript, so a thread can start whether or not the process runs TypeScript. Node 20 does
 * not carry module hooks into worker threads (neither `--import tsx` in execArgv nor tsx's
 * `register()` in the parent), so the thread registers tsx itself before importing TypeScript.
 * Valid as CommonJS and as ESM: threads inherit execArgv, which may hold --input-type=module.
 */
const BOOTSTRAP = `
(async () => {
  const { workerData } = await import('node:worker_threads');
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.entry);
})().catch((e) => process.nextTick(() => { throw e; }));
`;

/**
 * A small pool of worker threads for CPU-heavy stage work, so the event loop stays free to serve
 * Kafka (rebalance callbacks, max.poll.interval) while a long batch is computed. One task per thread
 * at a time; inputs and outputs cross by structured clone (a Buffer arrives as a Uint8Array).
 *
 * Idle threads do not keep the process alive; call {@link close} to release them.
 */
export class ThreadPool {
  /** Most threads running at once. */
  readonly size: number;
  readonly #workerData: ThreadPoolWorkerData & { entry: string; tsx: string | undefined };
  readonly #idle: Slot[] = [];
  readonly #busy = new Set<Slot>();
  readonly #queue: Task[] = [];
  #closed = false;

  constructor(options: ThreadPoolOptions) {
    this.size = options.size ?? Math.min(2, availableParallelism());
    if (!Number.isInteger(this.size) || this.size < 1)
      throw new RangeError(`thread pool size must be a positive integer, got ${options.size}`);
    const module = moduleUrl(options.module);
    // The bundle's own thread-pool-worker.js, or the .ts beside this file under tsx.
    const entry = entryModule('runtime/thread-pool-worker');
    const needsTsx = [module, entry.href].some((u) => TS_EXTENSIONS.has(extname(new URL(u).pathname)));
    this.#workerData = {
      module,
      entry: entry.href,
      tsx: needsTsx ? import.meta.resolve('tsx/esm/api') : undefined,
    };
  }

  /** Threads currently started (busy or idle). */
  get threads(): number {
    return this.#idle.length + this.#busy.size;
  }

  /**
   * Runs the task on a free thread (queued while all are busy). If `signal` aborts, the promise
   * rejects with the signal's reason at once; a running task's thread is terminated and replaced,
   * because CPU-bound JavaScript cannot be interrupted any other way. Errors thrown by the task
   * reject with an Error of the same name, message and stack.
   */
  run<I, O>(input: I, signal?: AbortSignal): Promise<O> {
    if (this.#closed) return Promise.reject(new ThreadPoolClosedError('thread pool is closed'));
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<O>((resolve, reject) => {
      const task: Task = {
        input,
        signal,
        resolve: (v) => resolve(v as O),
        reject,
        onAbort: () => this.#abort(task),
      };
      signal?.addEventListener('abort', task.onAbort, { once: true });
      this.#queue.push(task);
      this.#dispatch();
    });
  }

  /** Terminates every thread; queued and running tasks reject with {@link ThreadPoolClosedError}. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const closed = new ThreadPoolClosedError('thread pool closed');
    for (const task of this.#queue.splice(0)) settle(task, () => task.reject(closed));
    const slots = [...this.#busy, ...this.#idle.splice(0)];
    this.#busy.clear();
    for (const slot of slots) if (slot.task) settle(slot.task, (t) => t.reject(closed));
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  #dispatch(): void {
    while (this.#queue.length > 0 && !this.#closed) {
      const slot = this.#idle.pop() ?? (this.threads < this.size ? this.#spawn() : undefined);
      if (!slot) return;
      const task = this.#queue.shift()!;
      slot.task = task;
      this.#busy.add(slot);
      slot.worker.ref();
      try {
        slot.worker.postMessage(task.input);
      } catch (e) {
        // The input could not be cloned; the thread never saw it.
        this.#release(slot);
        settle(task, (t) => t.reject(e));
      }
    }
  }

  #spawn(): Slot {
    const worker = new Worker(BOOTSTRAP, { eval: true, workerData: this.#workerData });
    const slot: Slot = { worker, task: undefined };
    worker.on('message', (reply: TaskReply) => {
      const task = slot.task;
      if (!task) return;
      this.#release(slot);
      settle(task, (t) => (reply.ok ? t.resolve(reply.output) : t.reject(revive(reply.error))));
      this.#dispatch();
    });
    // An uncaught error (the module failed to load, a stray rejection) ends the thread; 'exit' follows.
    worker.on('error', (e) => this.#lost(slot, e));
    worker.on('exit', (exitCode) =>
      this.#lost(slot, new Error(`worker thread exited with code ${exitCode}`)),
    );
    return slot;
  }

  #release(slot: Slot): void {
    slot.task = undefined;
    this.#busy.delete(slot);
    if (this.#closed) return;
    this.#idle.push(slot);
    slot.worker.unref();
  }

  #lost(slot: Slot, error: unknown): void {
    const wasKnown = this.#busy.delete(slot) || removeFrom(this.#idle, slot);
    const task = slot.task;
    slot.task = undefined;
    if (task) settle(task, (t) => t.reject(error));
    if (wasKnown) this.#dispatch();
  }

  #abort(task: Task): void {
    const queued = this.#queue.indexOf(task);
    if (queued >= 0) this.#queue.splice(queued, 1);
    const slot = [...this.#busy].find((s) => s.task === task);
    settle(task, (t) => t.reject(t.signal?.reason));
    if (slot) {
      slot.task = undefined;
      this.#busy.delete(slot);
      void slot.worker.terminate();
      this.#dispatch();
    }
  }
}

/** Settles a task once and detaches its abort listener. */
function settle(task: Task, fn: (t: Task) => void): void {
  task.signal?.removeEventListener('abort', task.onAbort);
  fn(task);
}

function revive(e: SerializedError): Error {
  const err = new Error(e.message);
  err.name = e.name;
  err.stack = e.stack ?? `${e.name}: ${e.message}`;
  if (e.code !== undefined) Object.assign(err, { code: e.code });
  return err;
}

function removeFrom<T>(xs: T[], x: T): boolean {
  const i = xs.indexOf(x);
  if (i >= 0) xs.splice(i, 1);
  return i >= 0;
}

function moduleUrl(module: URL | string): string {
  if (module instanceof URL) return module.href;
  if (/^[a-z][a-z0-9+.-]*:/i.test(module) && !/^[a-z]:[\\/]/i.test(module)) return module;
  return pathToFileURL(resolve(module)).href;
}
