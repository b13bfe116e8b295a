import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** A test/support/worker-process.ts child; `lines` collects its stdout lines. */
export interface SpawnedWorker {
  child: ChildProcess;
  lines: string[];
}

/** Starts a pass-through worker process; every child is recorded in `children` for cleanup. */
export function spawnWorker(env: Record<string, string>, children: ChildProcess[]): SpawnedWorker {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/worker-process.ts'], {
    env: { ...process.env, UV_THREADPOOL_SIZE: '16', HAMSTRING_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines: string[] = [];
  createInterface({ input: child.stdout }).on('line', (l) => lines.push(l));
  return { child, lines };
}

/** Resolves when the child has exited, also when it already had. */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((r) => child.once('exit', () => r()));
}
