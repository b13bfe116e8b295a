import type { Stage, StageOutput } from '../../src/runtime/stage.ts';

/**
 * Sums the numeric values per key in a store and emits the running sum per record (key = the
 * input key): the last output per key is that key's sum, and the changelog holds the same sum.
 */
export function countingStage(input: string, output: string, name: string): Stage {
  return {
    name,
    inputTopics: [input],
    outputTopics: [output],
    stores: { sums: {} },
    process(records, ctx) {
      const outputs: StageOutput[] = [];
      for (const r of records) {
        const sums = ctx.state(r.partition).store<number>('sums');
        const key = r.key!.toString();
        const next = (sums.get(key) ?? 0) + Number(r.value!.toString());
        sums.put(key, next);
        outputs.push({ topic: output, key, value: String(next), source: r });
      }
      return { outputs };
    },
  };
}

/** The same stage without a store: what the counting stage's throughput is compared with. */
export function statelessStage(input: string, output: string, name: string): Stage {
  return {
    name,
    inputTopics: [input],
    outputTopics: [output],
    process: (records) => ({
      outputs: records.map((r) => ({
        topic: output,
        key: r.key!.toString(),
        value: String(Number(r.value!.toString())),
        source: r,
      })),
    }),
  };
}

interface Window {
  count: number;
  lastAt: number;
}

/**
 * Counts records per window (value / `size`, per partition) and closes a window from its timer once
 * no record reached it for `closeAfterMs`: one output `<partition>/<window>` = count, and the window
 * leaves the store in the same transaction.
 */
export function windowStage(
  input: string,
  output: string,
  name: string,
  o: { size: number; closeAfterMs: number; intervalMs: number },
): Stage {
  return {
    name,
    inputTopics: [input],
    outputTopics: [output],
    stores: { windows: {} },
    timer: { intervalMs: o.intervalMs },
    process(records, ctx) {
      const now = Date.now();
      for (const r of records) {
        const windows = ctx.state(r.partition).store<Window>('windows');
        const key = `w${String(Math.floor(Number(r.value!.toString()) / o.size)).padStart(8, '0')}`;
        windows.put(key, { count: (windows.get(key)?.count ?? 0) + 1, lastAt: now });
      }
      return { outputs: [] };
    },
    onTimer(ctx) {
      const windows = ctx.state.store<Window>('windows');
      const outputs: StageOutput[] = [];
      for (const [key, w] of windows.range()) {
        if (ctx.now - w.lastAt < o.closeAfterMs) continue;
        outputs.push({ topic: output, key: `${ctx.partition}/${key}`, value: String(w.count) });
        windows.delete(key);
      }
      return { outputs };
    },
  };
}
