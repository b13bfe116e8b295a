import type { AdminPort } from '../../kafka/admin.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Sum of the high watermarks of the watched topics: it moves while any stage or agent works. */
async function writtenSoFar(admin: AdminPort, watched: (topics: string[]) => string[]): Promise<number> {
  let total = 0;
  for (const t of watched(await admin.listTopics(15_000)))
    for (const w of await admin.watermarks(t, 15_000)) total += w.high;
  return total;
}

/**
 * Waits until none of the `watched` topics (chosen from the cluster's) grew for `quietMs`: every
 * stage and the agent idle, the input consumed, the collector's batches and the detectors' windows
 * out, the monitoring rows copied. Leave out topics written on a timer whatever the traffic (the
 * collector's fill-level samples), which never stand still, and those of other runs on a shared
 * broker. Admin errors (a broker restarting) count as "not quiet yet".
 * @returns whether the topics stood still before `deadline`.
 */
export async function waitQuiet(
  admin: AdminPort,
  quietMs: number,
  deadline: number,
  watched: (topics: string[]) => string[],
): Promise<boolean> {
  let last = -1;
  let stillSince = Date.now();
  while (Date.now() < deadline) {
    const now = await writtenSoFar(admin, watched).catch(() => -1);
    if (now < 0 || now !== last) {
      last = now;
      stillSince = Date.now();
    } else if (Date.now() - stillSince >= quietMs) return true;
    await sleep(500);
  }
  return false;
}
