/* global process */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { allocatorEnv, forgetPreloadedAllocator } from './allocator.js';

/**
 * librdkafka calls run on libuv's thread pool (4 threads by default). A call librdkafka never
 * returns from pins one thread for good; a larger pool keeps the process serving Kafka meanwhile,
 * and liveness turns red only once stuck calls hold half of it.
 */
export const THREAD_POOL_SIZE = '16';

/**
 * V8's young generation for the relaunched process: 32 MB semi-spaces instead of 16. The stages
 * allocate a short-lived object or string per line at every step (JSON, rows, ids); with the
 * default size the scavenger ran so often that bench:pipeline spent 8 % more CPU per line.
 */
export const YOUNG_GENERATION_FLAG = '--max-semi-space-size=32';

/**
 * The environment of a relaunched hamstring process: the pool size, and jemalloc preloaded when the
 * machine has it (see allocator.js).
 *
 * @param {NodeJS.ProcessEnv} env
 */
export function relaunchEnv(env) {
  return { ...env, ...allocatorEnv(env), UV_THREADPOOL_SIZE: THREAD_POOL_SIZE };
}

/**
 * libuv sizes its pool from UV_THREADPOOL_SIZE when the first task is queued, and Node's module
 * loader queues file reads on it before the first line of any module runs: setting the variable
 * from inside the process is too late (the pool stays at 4). So without the variable in the
 * environment, the command runs itself again as a child with it set (and with
 * {@link YOUNG_GENERATION_FLAG} unless a semi-space size was chosen, and the allocator of
 * {@link relaunchEnv}), passes signals on, and exits with the child's status. Returns false when
 * this process is the one to do the work.
 */
export function relaunchWithThreadPool() {
  if (process.env.UV_THREADPOOL_SIZE !== undefined) {
    forgetPreloadedAllocator(process.env);
    // The relaunched child dies with its parent, also when the parent was killed with SIGKILL.
    if (process.channel) {
      process.once('disconnect', () => process.kill(process.pid, 'SIGKILL'));
      process.channel.unref();
    }
    return false;
  }
  const chosen = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) =>
    a.includes('--max-semi-space-size'),
  );
  const flags = chosen ? process.execArgv : [YOUNG_GENERATION_FLAG, ...process.execArgv];
  const child = spawn(process.execPath, [...flags, ...process.argv.slice(1)], {
    env: relaunchEnv(process.env),
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    // Its own process group: a terminal's Ctrl-C reaches it once, through this process.
    detached: true,
  });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal ? constants.signals[signal] : 0)));
  return true;
}
