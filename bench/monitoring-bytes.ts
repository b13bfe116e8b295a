/**
 * Bytes a line costs in Kafka records: N generated valid lines through the logserver and the
 * collector in memory (their real stages and record formats, the test store, no broker), then the
 * collector's timer long after the last line so every batch leaves. Prints per output topic the
 * bytes of record values per input line: the line's own hops beside the monitoring rows the two
 * stages write about it.
 *
 *   node --import tsx bench/monitoring-bytes.ts [--lines 20000]
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/index.ts';
import type { StageOutput } from '../src/runtime/index.ts';
import { createCollectorStage, createLogserverStage } from '../src/stages/index.ts';
import { MemoryState } from '../test/support/memory-state.ts';
import { record, stageContext, timerContext } from '../test/support/stage-context.ts';
import { validLine } from './collector-workload.ts';

const { values: args } = parseArgs({ options: { lines: { type: 'string', default: '20000' } } });
const total = Number(args.lines);
const config = loadConfig({ path: new URL('../config.yaml', import.meta.url).pathname, env: {} });
const logserver = createLogserverStage({ config });
const collector = createCollectorStage({ config, collectorName: 'dga_collector' });

const bytes = new Map<string, number>();
const count = (outputs: readonly StageOutput[]) => {
  for (const o of outputs) {
    const size = o.value === null ? 0 : Buffer.byteLength(o.value);
    bytes.set(o.topic, (bytes.get(o.topic) ?? 0) + size);
  }
};
const sync = <T>(result: T | Promise<T>): T => {
  if (result instanceof Promise) throw new Error('the logserver and the collector process synchronously');
  return result;
};

const input = logserver.inputTopics[0]!;
const lines = Array.from({ length: total }, (_, i) => record(input, 0, i, validLine(i)));
const state = new MemoryState(['batches']);
let collectorOffset = 0;
for (let from = 0; from < total; from += 500) {
  const out = sync(logserver.process(lines.slice(from, from + 500), stageContext())).outputs;
  count(out);
  const forwarded = out
    .filter((o) => o.topic.includes('logserver_to_collector'))
    .map((o) => record(o.topic, 0, collectorOffset++, o.value as Buffer));
  count(sync(collector.process(forwarded, stageContext(state))).outputs);
}
// Every batch times out: the lines' event times are long past.
count(sync(collector.onTimer!(timerContext(state, 0, Date.now() + 3_600_000))).outputs);

const inputBytes = lines.reduce((sum, l) => sum + (l.value?.length ?? 0), 0);
console.log(
  `${total} lines of ${(inputBytes / total).toFixed(0)} bytes through the logserver and the collector`,
);
console.log('bytes of record values per line, by topic:');
let monitoring = 0;
for (const [topic, n] of [...bytes].sort((a, b) => b[1] - a[1])) {
  if (topic.startsWith('clickhouse_')) monitoring += n;
  console.log(`  ${topic.padEnd(52)} ${(n / total).toFixed(0).padStart(6)}`);
}
console.log(
  `  ${'monitoring rows (clickhouse_*) in all'.padEnd(52)} ${(monitoring / total).toFixed(0).padStart(6)}`,
);
