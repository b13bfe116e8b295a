/**
 * Collector CPU benchmark: lines/s through validation, subnet ids, per-subnet batching and
 * monitoring rows (one `process` call per 50 records, in-memory stores, no Kafka), for valid lines
 * and for hostile ones (too long, invalid UTF-8, deep JSON, a value built to make a backtracking
 * engine explode). Prints the figures; the share of hostile lines is a flag. Lines per CPU-second is
 * the figure to compare on a shared machine (wall time there measures the neighbours too). The stores
 * are the in-memory test fakes (JSON copies on every put and get), not the runtime's engine.
 *
 *   node --import tsx bench/collector.ts [--lines 100000] [--hostile-share 0.5]
 */
import { parseArgs } from 'node:util';
import { runCollector, validLine as valid } from './collector-workload.ts';

const { values } = parseArgs({
  options: {
    lines: { type: 'string', default: '100000' },
    'hostile-share': { type: 'string', default: '0.5' },
  },
});
const total = Number(values.lines);
const hostileShare = Number(values['hostile-share']);

const HOSTILE: (string | Buffer)[] = [
  'x'.repeat(20_000),
  Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
  `${'['.repeat(5000)}${']'.repeat(5000)}`,
  valid(1).replace('host1.example1.org', `${'a'.repeat(250)}-.${'a-'.repeat(40)}`),
  '{"ts": "2026-11-30T00:00:00.000000Z", "src_ip": "10.0.0.1"',
];

function measure(label: string, make: (i: number) => string | Buffer): void {
  const { wallSeconds, cpuSeconds, outputs } = runCollector(total, make);
  console.log(
    `${label}: ${total} lines, ${Math.round(total / wallSeconds)} lines/s wall (${wallSeconds.toFixed(2)} s), ` +
      `${Math.round(total / cpuSeconds)} lines per CPU-second (${cpuSeconds.toFixed(2)} s CPU; ${outputs} outputs)`,
  );
}

measure('valid lines', valid);
measure(`mixed (${hostileShare * 100}% hostile)`, (i) =>
  i % 100 < hostileShare * 100 ? HOSTILE[i % HOSTILE.length]! : valid(i),
);
measure('hostile lines only', (i) => HOSTILE[i % HOSTILE.length]!);
