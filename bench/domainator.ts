/**
 * The Domainator stage alone in memory: generated traffic (500 hosts, seeded) in batches of 100
 * lines, 5 batches a `process` call, the shipped detector settings and the test store (which copies
 * values as JSON on every get and put, as the runtime's store encodes them). Prints the stage's CPU
 * a line, and how many windows a call writes per line it reads: each is a changelog record and a
 * local-copy entry in the runtime's store when the call's transaction commits.
 *
 *   node --import tsx bench/domainator.ts [--seconds 240] [--rounds 3]
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/index.ts';
import { createDetectorStage } from '../src/stages/detector/index.ts';
import { windowDomain } from '../src/stages/detector/domainator/grouping.ts';
import { generateTraffic } from '../src/traffic/generator.ts';
import { MemoryState } from '../test/support/memory-state.ts';
import { record, stageContext } from '../test/support/stage-context.ts';

const { values: args } = parseArgs({
  options: { seconds: { type: 'string', default: '240' }, rounds: { type: 'string', default: '3' } },
});
const config = loadConfig({ path: new URL('../config.yaml', import.meta.url).pathname, env: {} });
const detector = config.pipeline.data_analysis.find((d) => d.detector_class_name === 'DomainatorDetector');
if (!detector) throw new Error('config.yaml has no DomainatorDetector');
const stage = await createDetectorStage(config, detector);

interface Line {
  readonly [field: string]: unknown;
  readonly src_ip: string;
  readonly domain_name: string;
  readonly ts: string;
}
const lines: Line[] = [];
const traffic = generateTraffic({
  seed: 3,
  rate: 500,
  durationSeconds: Number(args.seconds),
  hosts: 500,
  startMs: Date.UTC(2026, 10, 30),
});
for (const g of traffic.lines()) {
  const line = JSON.parse(g.line) as Line;
  const subnet = `${g.srcIp.split('.').slice(0, 3).join('.')}.0_24`;
  lines.push({ ...line, logline_id: `line-${lines.length}`, subnet_id: subnet });
}
const BATCH = 100;
const PER_CALL = 5;
const batches: Buffer[] = [];
for (let i = 0; i < lines.length; i += BATCH) {
  const data = lines.slice(i, i + BATCH);
  const batch = {
    batch_tree_row_id: `row-${i}`,
    batch_id: `batch-${i}`,
    begin_timestamp: data[0]!.ts,
    end_timestamp: data.at(-1)!.ts,
    data,
  };
  batches.push(Buffer.from(JSON.stringify(batch)));
}

const searchDomains = detector.domainator.search_domains;
let writes = 0;
for (let i = 0; i < lines.length; i += BATCH * PER_CALL) {
  const keys = new Set<string>();
  for (const line of lines.slice(i, i + BATCH * PER_CALL)) {
    const window = windowDomain(line.domain_name, searchDomains);
    if (window) keys.add(`${window.registrable}\u0000${line.src_ip}`);
  }
  writes += keys.size;
}

const topic = stage.inputTopics[0]!;
function round(): number {
  const state = new MemoryState();
  const before = process.cpuUsage();
  for (let i = 0; i < batches.length; i += PER_CALL) {
    const records = batches.slice(i, i + PER_CALL).map((value, j) => record(topic, 0, i + j, value));
    const result = stage.process(records, stageContext(state));
    if (result instanceof Promise) throw new Error('the Domainator processes synchronously');
  }
  const cpu = process.cpuUsage(before);
  return (cpu.user + cpu.system) / lines.length;
}

console.log(`${lines.length} lines in ${batches.length} batches of ${BATCH}, ${PER_CALL} a call`);
console.log(`windows written per line read: ${(writes / lines.length).toFixed(2)} (a changelog record each)`);
round(); // compiles the stage's code
const rounds = Array.from({ length: Number(args.rounds) }, round);
console.log(`CPU a line: ${rounds.map((us) => `${us.toFixed(1)} µs`).join(', ')}`);
