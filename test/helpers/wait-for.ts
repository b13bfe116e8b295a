/** Options of {@link waitFor}. */
export interface WaitForOptions {
  timeoutMs: number;
  /** Default 100 ms. */
  intervalMs?: number;
  /** What is awaited, in words; starts the error message on timeout. */
  message: string;
  /** Extra state to print on timeout (e.g. a counter the condition compares). */
  observe?: () => unknown;
}

/**
 * Polls `condition` until it returns true; the only way tests wait (never a fixed sleep). On the
 * deadline it rejects with the message, the last value the condition returned (or the error it
 * threw: a throwing condition counts as "not yet") and what `observe` reports.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  opts: WaitForOptions,
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  const intervalMs = opts.intervalMs ?? 100;
  let last: string;
  for (;;) {
    try {
      const value = await condition();
      if (value) return;
      last = `returned ${String(value)}`;
    } catch (error) {
      last = `threw ${error instanceof Error ? error.message : String(error)}`;
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      const observed = opts.observe ? `; observed: ${describe(opts.observe)}` : '';
      throw new Error(
        `timed out after ${opts.timeoutMs} ms waiting for: ${opts.message} (condition ${last}${observed})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, left)));
  }
}

function describe(observe: () => unknown): string {
  try {
    const value = observe();
    return typeof value === 'string' ? value : JSON.stringify(value);
  } catch (error) {
    return `observe() threw ${error instanceof Error ? error.message : String(error)}`;
  }
}
