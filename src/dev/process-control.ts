import { spawn } from 'node:child_process';
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { pollUntil } from './poll.ts';

/** How a process we spawned ended (only known in the process that spawned it). */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A detached child: it survives the spawning Node process. */
export interface DetachedProcess {
  readonly pid: number;
  /** Undefined while running, or when the exit happened after this process stopped watching. */
  exitStatus(): ExitStatus | undefined;
}

/** Options of {@link spawnDetached}. */
export interface SpawnDetachedOptions {
  cwd: string;
  /** stdout and stderr are appended here. */
  outputFile: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * Starts `command` in its own process group with stdout/stderr appended to a file, so that it
 * keeps running after the CLI that started it exits, and its output is still there to read.
 */
export function spawnDetached(
  command: string,
  args: readonly string[],
  opts: SpawnDetachedOptions,
): DetachedProcess {
  const out = openSync(opts.outputFile, 'a');
  try {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      detached: true,
      stdio: ['ignore', out, out],
    });
    let status: ExitStatus | undefined;
    child.once('exit', (code, signal) => (status = { code, signal }));
    // The spawn error (e.g. ENOENT) is reported through pid === undefined below.
    child.once('error', () => undefined);
    if (child.pid === undefined) throw new Error(`could not start ${command} (not found or not executable)`);
    child.unref();
    return { pid: child.pid, exitStatus: () => status };
  } finally {
    closeSync(out);
  }
}

/** Scheduler state of a process as far as we care: stopped means SIGSTOP'ed (paused). */
export type ProcessState = 'running' | 'stopped' | 'gone';

/**
 * State of `pid`, counting it as gone when it is a zombie or when its command line does not
 * contain `marker` (a pid reused by an unrelated process after ours died).
 */
export function processState(pid: number, marker?: string): ProcessState {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return 'gone';
  }
  if (!existsSync('/proc/self/stat')) return 'running';
  let state: string;
  try {
    state = schedulerState(pid);
    // A zombie leader of a multi-threaded process (a JVM, ClickHouse) may still have threads
    // tearing down and holding its sockets: it is gone only when no other thread is left.
    if (state === 'Z' || state === 'X')
      return readdirSync(`/proc/${pid}/task`).length <= 1 ? 'gone' : 'running';
    // An exiting process has an empty command line (memory released before files): not a reuse.
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    if (marker !== undefined && cmdline !== '' && !cmdline.split('\0').some((arg) => arg.includes(marker))) {
      return 'gone';
    }
  } catch {
    return 'gone';
  }
  return state === 'T' || state === 't' ? 'stopped' : 'running';
}

function schedulerState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name in parentheses may itself contain spaces or parentheses.
  const end = stat.lastIndexOf(')');
  return stat.slice(end + 2, end + 3);
}

/** True while the process exists (running or paused) and matches `marker`. */
export function isProcessAlive(pid: number, marker?: string): boolean {
  return processState(pid, marker) !== 'gone';
}

/** Sends a signal; a process that is already gone is not an error for SIGKILL/SIGTERM callers. */
export function signalProcess(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

/**
 * SIGSTOP or SIGCONT, returning once the kernel shows the process stopped or running again
 * (signal delivery to every thread of a JVM is not instantaneous). Synchronous on purpose: the
 * caller's next statement can rely on the new state.
 */
export function pauseOrResume(
  pid: number,
  marker: string,
  signal: 'SIGSTOP' | 'SIGCONT',
  timeoutMs = 2000,
): void {
  if (!signalProcess(pid, signal)) throw new Error(`process ${pid} is not running`);
  const want: ProcessState = signal === 'SIGSTOP' ? 'stopped' : 'running';
  const pause = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + timeoutMs;
  while (processState(pid, marker) !== want) {
    if (Date.now() > deadline) throw new Error(`process ${pid} not ${want} ${timeoutMs} ms after ${signal}`);
    Atomics.wait(pause, 0, 0, 5);
  }
}

/** Waits until the process is gone; false when it is still there at the deadline. */
export async function waitForExit(pid: number, timeoutMs: number, marker?: string): Promise<boolean> {
  try {
    await pollUntil(() => !isProcessAlive(pid, marker), {
      timeoutMs,
      intervalMs: 50,
      onTimeout: () => new Error('still running'),
    });
    return true;
  } catch {
    return false;
  }
}

/**
 * kill -9 and wait until the process is gone. The marker is checked before signalling only: a
 * pid we signalled cannot be reused until it is reaped, and the check itself is unreliable
 * while the process exits.
 */
export async function killAndWait(pid: number, marker: string, timeoutMs = 10_000): Promise<void> {
  if (!isProcessAlive(pid, marker)) return;
  signalProcess(pid, 'SIGKILL');
  if (!(await waitForExit(pid, timeoutMs))) {
    throw new Error(`process ${pid} did not exit within ${timeoutMs} ms after SIGKILL`);
  }
}

/**
 * SIGTERM, then SIGKILL after `graceMs`. SIGCONT follows SIGTERM because a paused (SIGSTOP)
 * process would otherwise never handle it.
 */
export async function terminate(pid: number, marker: string, graceMs: number): Promise<'exited' | 'killed'> {
  if (!isProcessAlive(pid, marker)) return 'exited';
  signalProcess(pid, 'SIGTERM');
  signalProcess(pid, 'SIGCONT');
  if (await waitForExit(pid, graceMs)) return 'exited';
  signalProcess(pid, 'SIGKILL');
  if (!(await waitForExit(pid, 10_000)))
    throw new Error(`process ${pid} did not exit within 10 s after SIGKILL`);
  return 'killed';
}

/**
 * The last `lines` lines of a text file ('' when it does not exist), for error messages. Java
 * stack frames are left out: the exception line above them is what explains a failure.
 */
export function tailFile(path: string, lines = 20): string {
  if (!existsSync(path)) return '';
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, 64 * 1024);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .filter((line) => !/^\s+(at |\.\.\. \d+ more)/.test(line))
      .slice(-lines)
      .join('\n');
  } finally {
    closeSync(fd);
  }
}
