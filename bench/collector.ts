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
import { loadConfig } from '../src/config/index.ts';
import type { StageRecord } from '../src/runtime/index.ts';
import { createCollectorStage } from '../src/stages/index.ts';
import { MemoryState } from '../test/support/memory-state.ts';
import { record, stageContext } from '../test/support/stage-context.ts';

const { values } = parseArgs({
  options: {
    lines: { type: 'string', default: '100000' },
    'hostile-share': { type: 'string', default: '0.5' },
  },
});
const total = Number(values.lines);
const hostileShare = Number(values['hostile-share']);

const config = loadConfig({ path: new URL('../config.yaml', import.meta.url).pathname, env: {} });
const TOPIC = 'pipeline-logserver_to_collector-dga_collector';

function valid(i: number): string {
  const micros = String(i % 1_000_000).padStart(6, '0');
  return JSON.stringify({
    ts: `2026-11-30T00:00:${String(i % 60).padStart(2, '0')}.${micros}Z`,
    status_code: i % 3 === 0 ? 'NXDOMAIN' : 'NOERROR',
    src_ip: `10.${(i >> 16) & 255}.${(i >> 8) & 63}.${i & 255}`,
    dns_server_ip: '192.168.2.53',
    domain_name: `host${i}.example${i % 97}.org`,
    record_type: i % 2 === 0 ? 'A' : 'AAAA',
    response_ip: '2001:db8::1',
    size: `${100 + (i % 400)}b`,
  });
}

const HOSTILE: (string | Buffer)[] = [
  'x'.repeat(20_000),
  Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
  `${'['.repeat(5000)}${']'.repeat(5000)}`,
  valid(1).replace('host1.example1.org', `${'a'.repeat(250)}-.${'a-'.repeat(40)}`),
  '{"ts": "2026-11-30T00:00:00.000000Z", "src_ip": "10.0.0.1"',
];

function measure(label: string, make: (i: number) => string | Buffer): void {
  const stage = createCollectorStage({ config, collectorName: 'dga_collector' });
  const state = new MemoryState(['batches']);
  const records: StageRecord[] = Array.from({ length: total }, (_, i) => record(TOPIC, 0, i, make(i)));
  const started = process.hrtime.bigint();
  const cpuBefore = process.cpuUsage();
  let outputs = 0;
  for (let from = 0; from < records.length; from += 50) {
    const result = stage.process(records.slice(from, from + 50), stageContext(state));
    if (result instanceof Promise) throw new Error('collector process is synchronous');
    outputs += result.outputs.length;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpu = process.cpuUsage(cpuBefore);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  console.log(
    `${label}: ${total} lines, ${Math.round(total / seconds)} lines/s wall (${seconds.toFixed(2)} s), ` +
      `${Math.round(total / cpuSeconds)} lines per CPU-second (${cpuSeconds.toFixed(2)} s CPU; ${outputs} outputs)`,
  );
}

measure('valid lines', valid);
measure(`mixed (${hostileShare * 100}% hostile)`, (i) =>
  i % 100 < hostileShare * 100 ? HOSTILE[i % HOSTILE.length]! : valid(i),
);
measure('hostile lines only', (i) => HOSTILE[i % HOSTILE.length]!);
