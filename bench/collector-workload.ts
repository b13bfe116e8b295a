/**
 * The collector stage alone over in-memory stores (no Kafka): the workload of `bench/collector.ts`,
 * and the yardstick `bench/pipeline.ts` measures the machine with before each round.
 */
import { loadConfig } from '../src/config/index.ts';
import type { StageRecord } from '../src/runtime/index.ts';
import { createCollectorStage } from '../src/stages/index.ts';
import { MemoryState } from '../test/support/memory-state.ts';
import { record, stageContext } from '../test/support/stage-context.ts';

const config = loadConfig({ path: new URL('../config.yaml', import.meta.url).pathname, env: {} });
const TOPIC = 'pipeline-logserver_to_collector-dga_collector';

/** A valid DNS log line, different for each `i`. */
export function validLine(i: number): string {
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

export interface CollectorRun {
  readonly lines: number;
  readonly wallSeconds: number;
  readonly cpuSeconds: number;
  readonly outputs: number;
}

/** Runs `total` lines made by `make` through a new collector, one `process` call per 50 records. */
export function runCollector(total: number, make: (i: number) => string | Buffer): CollectorRun {
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
  const cpu = process.cpuUsage(cpuBefore);
  return {
    lines: total,
    wallSeconds: Number(process.hrtime.bigint() - started) / 1e9,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    outputs,
  };
}

/**
 * How fast this machine runs the project's code at this moment, in collector lines per CPU-second
 * (valid lines). On a shared host the same code doing the same work took up to a fifth more CPU time
 * from one hour to the next; printed beside a round's lines/s, it tells a slow machine from a slow
 * pipeline. A short first run compiles the code, so the figure is of the warm stage.
 */
export function machineSpeed(lines = 40_000): number {
  runCollector(5_000, validLine);
  const run = runCollector(lines, validLine);
  return run.lines / run.cpuSeconds;
}
