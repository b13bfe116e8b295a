/** What every fault schedule shares: waiting for progress, holding a fault, the abort ratio. */
import type { ScenarioContext } from './scenario.ts';

export const ABORT_ONE_IN_THREE = 1 / 3;
const GATE_TIMEOUT_MS = 90_000;

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until `progressed()` holds, the input is nearly used up, or the gate times out. Returns
 * false when the fault fires without the progress it waited for (the report says so).
 */
export async function gate(ctx: ScenarioContext, progressed: () => boolean): Promise<boolean> {
  const deadline = Date.now() + GATE_TIMEOUT_MS;
  for (;;) {
    if (progressed()) return true;
    if (ctx.committed() >= ctx.records * 0.97 || Date.now() > deadline) return false;
    await sleep(200);
  }
}

/** Waits until the last stage committed `share` of the input more than when called. */
export function progressGate(ctx: ScenarioContext, share: number): Promise<boolean> {
  const from = ctx.committed();
  return gate(ctx, () => ctx.committed() - from >= ctx.records * share);
}

/** A fault that holds for `ms`: `begin`, then `end` however the wait ends. */
export async function holdFault(ms: number, begin: () => void, end: () => void): Promise<void> {
  begin();
  try {
    await sleep(ms);
  } finally {
    end();
  }
}
