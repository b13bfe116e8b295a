/**
 * Clients given up while one of their native calls is still pending. They stay referenced for the
 * life of the process: if V8 collected one, the binding's destructor would run under librdkafka's
 * feet (a segfault). A small, deliberate leak in a rare failure case.
 *
 * Each such call also holds one libuv pool thread for good (seen with send_offsets_to_transaction
 * while the group coordinator was unreachable, now bounded by a patch to the client). When
 * the pool is used up every Kafka call of the process queues forever, so the runtime declares the
 * process not live well before that (see {@link stuckCallsExhaustPool}) and lets its supervisor
 * start a fresh one.
 */
const abandoned = new Set<unknown>();
let stuckCalls = 0;

export function abandon(client: unknown, pendingCalls: number): void {
  abandoned.add(client);
  stuckCalls += pendingCalls;
}

/**
 * An abandoned client whose pending calls came back after all: it no longer pins pool threads, and
 * the caller now disconnects it (its dispatchers would otherwise keep the process alive).
 */
export function release(client: unknown, pendingCalls: number): void {
  if (!abandoned.delete(client)) return;
  stuckCalls -= pendingCalls;
}

/** Native calls of abandoned clients that never returned (each pins a libuv pool thread). */
export function stuckNativeCalls(): number {
  return stuckCalls;
}

/** libuv's pool size as this process started it (bin/threadpool.js sets 16 unless set). */
export function threadPoolSize(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.UV_THREADPOOL_SIZE);
  return Number.isInteger(n) && n > 0 ? Math.min(n, 1024) : 4;
}

/**
 * True when stuck calls hold half the pool: the process still works but is one long outage away
 * from a total hang, and only a restart frees the threads.
 */
export function stuckCallsExhaustPool(stuck = stuckNativeCalls(), poolSize = threadPoolSize()): boolean {
  return stuck >= Math.max(1, Math.floor(poolSize / 2));
}
