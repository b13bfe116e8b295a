/**
 * Blocks this thread's event loop for `ms` milliseconds, never yielding, the way a stage stuck in
 * synchronous work would. Atomics.wait sleeps in the kernel instead of spinning: the event loop is
 * as blocked (no poll, no timer, no callback runs), and the 2 CPU cores stay free for the broker
 * and the files running beside this one.
 */
export function blockEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
