/**
 * `node --import tsx bench/inspector-disorder.ts [--seed 11] [--rate 100] [--hosts 64] [--duration 40]
 * [--alignments 40] [--timer-share 0.3] [--day 2026-12-03T19:00:00Z]`: infected hosts the DGA chain misses when a subnet's lines
 * reach the inspector out of event-time order, as they do when its hosts' lines come to the
 * logserver on different partitions and are read one partition's stretch after another. Generated
 * traffic (the pipeline-accounting test's by default) goes through the shipped StreamADInspector per
 * subnet in batches of 20, then through the DGA detector's own windows at the shipped settings. Three
 * orders: by event time; each subnet's lines one input partition after another (hosts spread over
 * three by address); the same read 50 lines a partition in turn. Between batches the inspector's
 * timer closes the newest bin with the given share (a loaded pipeline's subnets wait longer than
 * twice batch_timeout for their next batch); the draw is seeded. Prints, per order, the infected
 * hosts with no alert summed over the alignments (start times shifted 25 ms apart).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig, warningWindowSettings } from '../src/config/index.ts';
import { domainOf } from '../src/stages/detector/alerts.ts';
import { scoreNames } from '../src/stages/detector/model/dga-model.ts';
import { modelFromBytes } from '../src/stages/detector/model/model-file.ts';
import { windowRules } from '../src/stages/detector/spread-group.ts';
import { advanceWindows, type HostWindows, type WindowLine } from '../src/stages/detector/warning-window.ts';
import { addLines, closeOpenBin, type SubnetModel } from '../src/stages/inspector/bin-stream.ts';
import { inspectorModel } from '../src/stages/inspector/models.ts';
import type { LogLine } from '../src/stages/messages.ts';
import { generateTraffic } from '../src/traffic/index.ts';
import { nxdomainLinesBySubnet } from './nxdomain-subnets.ts';

const { values } = parseArgs({
  options: {
    seed: { type: 'string', default: '11' },
    rate: { type: 'string', default: '100' },
    hosts: { type: 'string', default: '64' },
    duration: { type: 'string', default: '40' },
    alignments: { type: 'string', default: '40' },
    'timer-share': { type: 'string', default: '0.3' },
    day: { type: 'string', default: '2026-12-03T19:00:00Z' },
  },
});
const config = loadConfig({ path: 'config.yaml' });
const inspector = config.pipeline.data_inspection.find(
  (entry) => entry.inspector_class_name === 'StreamADInspector',
);
const detector = config.pipeline.data_analysis.find((entry) => entry.detector_class_name === 'DGADetector');
if (!inspector || !detector) throw new Error('config.yaml needs a StreamADInspector and a DGADetector');
const modelPath = `models/${detector.model}.json`;
const model = modelFromBytes(modelPath, readFileSync(modelPath), detector.checksum!);
const rules = windowRules(warningWindowSettings(detector), detector.threshold);
const timerShare = Number(values['timer-share']);
const BATCH = 20;
const scores = new Map<string, number>();
const score = (name: string) => {
  let s = scores.get(name);
  if (s === undefined) scores.set(name, (s = scoreNames(model, [name])[0] ?? 0));
  return s;
};

type Order = (lines: readonly LogLine[], run: number) => LogLine[];
/** Each host's input partition of three: by its address's last byte, spread another way per run. */
const partitionOf = (ip: string, run: number) => (Number(ip.split('.').at(-1)) * 7 + run) % 3;
const byPartition =
  (stretch: number): Order =>
  (lines, run) => {
    const parts: LogLine[][] = [[], [], []];
    for (const l of lines) parts[partitionOf(l.src_ip, run)]!.push(l);
    const out: LogLine[] = [];
    for (let k = 0; parts.some((p) => k < p.length); k += stretch)
      for (const p of parts) out.push(...p.slice(k, k + stretch));
    return out;
  };
const orders: [string, Order][] = [
  ['by event time', (lines) => [...lines]],
  ['one partition after another', byPartition(Number.MAX_SAFE_INTEGER)],
  ['50 lines a partition in turn', byPartition(50)],
];

function missedHosts(
  run: number,
  startMs: number,
  order: Order,
  draw: () => number,
): { missed: number; infected: number } {
  const traffic = generateTraffic({
    seed: Number(values.seed),
    rate: Number(values.rate),
    durationSeconds: Number(values.duration),
    hosts: Number(values.hosts),
    startMs,
  });
  const bySubnet = nxdomainLinesBySubnet(traffic);
  const sent: LogLine[] = [];
  for (const sorted of bySubnet.values()) {
    const lines = order(sorted, run);
    const stream = inspectorModel(inspector!);
    let state: SubnetModel | undefined;
    for (let at = 0; at < lines.length; at += BATCH) {
      const v = addLines(lines.slice(at, at + BATCH), state, stream, inspector!, at);
      sent.push(...v.suspicious);
      state = v.next;
      if (state.open && draw() < timerShare) {
        const closed = closeOpenBin(state, stream, inspector!);
        sent.push(...closed.suspicious);
        state = closed.next;
      }
    }
    if (state?.open) sent.push(...closeOpenBin(state, stream, inspector!).suspicious);
  }
  const windowLines: WindowLine<LogLine>[] = sent.map((l) => {
    const name = domainOf(l);
    return {
      host: l.src_ip,
      id: l.logline_id,
      name,
      atMs: Date.parse(l.ts),
      score: name === undefined ? 0 : score(name),
      payload: l,
    };
  });
  const state = new Map<string, HostWindows<LogLine>>();
  const alerted = new Set(
    advanceWindows((h) => state.get(h), windowLines, rules, 0).alerts.map((a) => a.host),
  );
  const infected = traffic.truth.filter((h) => h.role === 'dga');
  return { missed: infected.filter((h) => !alerted.has(h.ip)).length, infected: infected.length };
}

/** The generated DGA names (so their scores) depend on the day. */
const day = Date.parse(values.day);
const alignments = Number(values.alignments);
console.log(
  `seed ${values.seed}, ${values.hosts} hosts x ${values.duration} s at ${values.rate} lines/s, ${alignments} alignments, ` +
    `the timer closing the newest bin after ${Math.round(timerShare * 100)} % of the batches`,
);
for (const [label, order] of orders) {
  let s = 7;
  const draw = () => (s = (s * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  let missed = 0;
  let infected = 0;
  for (let i = 0; i < alignments; i += 1) {
    const r = missedHosts(i, day + i * 25, order, draw);
    missed += r.missed;
    infected += r.infected;
  }
  console.log(`  ${label.padEnd(30)} infected hosts without an alert: ${missed} of ${infected}`);
}
