import { collectDefaultMetrics, Registry } from 'prom-client';

/**
 * The process's own series on /metrics beside the workers': resident memory, CPU seconds, open
 * file descriptors, V8 heap per space, memory outside the heap (Buffers), event-loop delay, GC time,
 * libuv handles (prom-client's default metrics, under their usual names, so the dashboards written
 * for any Node service read them). A stage that grows or stalls shows it where its operator already
 * looks, per process: which stage holds the memory, and whether it is the heap, the young
 * generation or the Buffers.
 *
 * One registry per process, made on first use: the collectors watch the whole process (a GC
 * observer, an event-loop histogram), so a second health server in the same process (tests, `up`)
 * reads the same one instead of starting its own.
 */
let registry: Registry | undefined;

export function processRegistry(): Registry {
  if (registry === undefined) {
    registry = new Registry();
    collectDefaultMetrics({ register: registry });
  }
  return registry;
}
