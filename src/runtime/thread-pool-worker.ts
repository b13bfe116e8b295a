import { parentPort, workerData } from 'node:worker_threads';

/** What the pool hands to a thread at start. */
export interface ThreadPoolWorkerData {
  /** URL of the task module (default export `(input) => output | Promise<output>`). */
  module: string;
}

/** An error as it crosses the thread boundary: structured clone would drop custom names. */
export interface SerializedError {
  name: string;
  message: string;
  stack: string | undefined;
  code?: string | number;
}

/** The thread's answer to one task. */
export type TaskReply = { ok: true; output: unknown } | { ok: false; error: SerializedError };

/** Name, message, stack and a string or numeric `code`; a thrown non-Error becomes its text. */
export function serializeError(e: unknown): SerializedError {
  if (!(e instanceof Error)) return { name: 'Error', message: String(e), stack: undefined };
  const out: SerializedError = { name: e.name, message: e.message, stack: e.stack };
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') out.code = code;
  return out;
}

// The thread side of ThreadPool: load the task module once, then answer one message per task.
const port = parentPort;
if (port) {
  const { module } = workerData as ThreadPoolWorkerData;
  const task = ((await import(module)) as { default?: unknown }).default;
  if (typeof task !== 'function') throw new TypeError(`${module} has no default export function`);
  const fn = task as (input: unknown) => unknown;

  port.on('message', (input: unknown) => {
    void (async () => {
      let reply: TaskReply;
      try {
        reply = { ok: true, output: await fn(input) };
      } catch (e) {
        reply = { ok: false, error: serializeError(e) };
      }
      try {
        port.postMessage(reply);
      } catch (e) {
        // The output could not be cloned (a function, a socket...): that is the task's error.
        port.postMessage({ ok: false, error: serializeError(e) } satisfies TaskReply);
      }
    })();
  });
}
