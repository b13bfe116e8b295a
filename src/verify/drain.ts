import { createAdmin, type AdminPort } from '../kafka/admin.ts';
import { readAllCommitted } from './reader.ts';

// Waiting for the stage groups of a run to commit their whole input, through the faults of the run.

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until every stage group committed its whole input, stage by stage. For the seeded input
 * (no transactions) that is the high watermark. A stage that reads another stage's transactional
 * output commits the offset after the last data record, which is one short of the high watermark
 * (the last offset is a commit marker, a control record a consumer never sees): its target is
 * therefore the offset after the last committed record, read with read_committed once the stage
 * before it has drained.
 */
export async function waitDrained(
  admin: AdminHolder,
  bootstrap: string,
  records: number,
  stages: readonly { group: string; from: string }[],
  stallMs: number,
): Promise<{ ok: boolean; detail: string }> {
  const details: string[] = [];
  for (const [i, s] of stages.entries()) {
    const deadline = new ProgressDeadline(stallMs);
    let targets: Map<number, number>;
    if (i === 0) {
      targets = new Map(
        (await admin.retry((a) => a.watermarks(s.from), deadline.at)).map((m) => [m.partition, m.high]),
      );
    } else {
      const read = await readAllCommitted(
        bootstrap,
        s.from,
        records,
        Math.max(30_000, deadline.at - Date.now()),
      );
      targets = new Map();
      for (const r of read.records)
        targets.set(r.partition, Math.max(targets.get(r.partition) ?? 0, r.offset + 1));
    }
    const result = await waitCommitted(admin, s, targets, deadline);
    details.push(`${s.group}: ${result.detail}`);
    if (!result.ok) return { ok: false, detail: details.join('; ') };
  }
  return { ok: true, detail: details.join('; ') };
}

async function waitCommitted(
  admin: AdminHolder,
  s: { group: string; from: string },
  targets: ReadonlyMap<number, number>,
  deadline: ProgressDeadline,
): Promise<{ ok: boolean; detail: string }> {
  let detail = 'not checked';
  for (;;) {
    try {
      const committed = new Map(
        (await admin.current().groupOffsets(s.group, [s.from])).map((c) => [c.partition, c.offset]),
      );
      deadline.progress([...committed.values()].reduce((a, b) => a + b, 0));
      const bad = [...targets].filter(([p, end]) => committed.get(p) !== end);
      detail =
        bad.length === 0
          ? `every partition of ${s.from} committed up to its end`
          : bad.map(([p, end]) => `${s.from}[${p}] committed ${committed.get(p)} end ${end}`).join(', ');
      if (bad.length === 0) return { ok: true, detail };
    } catch (e) {
      detail = `admin error: ${e instanceof Error ? e.message : String(e)}`;
      admin.renew();
    }
    if (Date.now() > deadline.at)
      return { ok: false, detail: `${detail} (no progress for ${deadline.stallMs} ms)` };
    await sleep(2_000);
  }
}

/** A deadline that moves out whenever the observed count grows: it only expires on a stall. */
class ProgressDeadline {
  #at: number;
  #last = -1;
  constructor(readonly stallMs: number) {
    this.#at = Date.now() + stallMs;
  }
  get at(): number {
    return this.#at;
  }
  progress(count: number): void {
    if (count > this.#last) {
      this.#last = count;
      this.#at = Date.now() + this.stallMs;
    }
  }
}

/**
 * An admin client that is replaced after an error: a client whose connection broke while the
 * broker was stopped (SIGSTOP) can keep failing with _TRANSPORT long after the broker is back.
 */
export class AdminHolder {
  #admin: AdminPort;
  constructor(private readonly bootstrap: string) {
    this.#admin = createAdmin(bootstrap, 'hamstring-verify');
  }
  current(): AdminPort {
    return this.#admin;
  }
  renew(): void {
    this.#admin.close();
    this.#admin = createAdmin(this.bootstrap, 'hamstring-verify');
  }
  async retry<T>(fn: (a: AdminPort) => Promise<T>, deadline: number): Promise<T> {
    for (;;) {
      try {
        return await fn(this.#admin);
      } catch (e) {
        if (Date.now() > deadline) throw e;
        this.renew();
        await sleep(2_000);
      }
    }
  }
  close(): void {
    this.#admin.close();
  }
}
