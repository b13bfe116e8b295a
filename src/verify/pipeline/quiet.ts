import type { AdminPort } from '../../kafka/admin.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Sum of the high watermarks of every topic but Kafka's own and those in `clock`: it moves while
 * any stage or agent works.
 */
async function writtenSoFar(admin: AdminPort, clock: ReadonlySet<string>): Promise<number> {
  const topics = (await admin.listTopics(15_000)).filter((t) => !t.startsWith('__') && !clock.has(t));
  let total = 0;
  for (const t of topics) for (const w of await admin.watermarks(t, 15_000)) total += w.high;
  return total;
}

/**
 * Waits until no topic of the cluster grew for `quietMs` (every stage and the agent idle: the input
 * consumed, the collector's batches and the detectors' windows out, the monitoring rows copied), or
 * the deadline. `clock`: topics written on a timer whatever the traffic (the collector's fill-level
 * samples), which never stand still. Admin errors (a broker restarting) count as "not quiet yet".
 * @returns whether the pipeline went quiet before the deadline.
 */
export async function waitQuiet(
  admin: AdminPort,
  quietMs: number,
  deadline: number,
  clock: ReadonlySet<string>,
): Promise<boolean> {
  let last = -1;
  let stillSince = Date.now();
  while (Date.now() < deadline) {
    const now = await writtenSoFar(admin, clock).catch(() => -1);
    if (now < 0 || now !== last) {
      last = now;
      stillSince = Date.now();
    } else if (Date.now() - stillSince >= quietMs) return true;
    await sleep(1_000);
  }
  return false;
}
