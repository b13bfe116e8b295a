/**
 * `node --import tsx bench/inspector-spans.ts [--seeds 4] [--hosts 120] [--duration 300] [--rate 400]`:
 * what the shipped StreamADInspector sends on of the NXDOMAIN lines its prefilter passes, for
 * generated traffic that starts on a whole second (each DGA burst inside one of the inspector's
 * one-second suspicion spans) and half a second off it (every burst straddling two spans). Prints
 * the share of benign hosts' lines and of infected hosts' lines sent on, the infected hosts' lines
 * that finished at the inspector (an alert can only count the lines that go on), and the infected
 * hosts with none sent on. Lines go in per subnet, in batches of 50, as the collector keys them.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/index.ts';
import { addLines, closeOpenBin, type SubnetModel } from '../src/stages/inspector/bin-stream.ts';
import { inspectorModel } from '../src/stages/inspector/models.ts';
import type { LogLine } from '../src/stages/messages.ts';
import { generateTraffic } from '../src/traffic/index.ts';
import { nxdomainLinesBySubnet } from './nxdomain-subnets.ts';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '4' },
    hosts: { type: 'string', default: '120' },
    duration: { type: 'string', default: '300' },
    rate: { type: 'string', default: '400' },
  },
});
const config = loadConfig({ path: 'config.yaml' });
const inspector = config.pipeline.data_inspection.find(
  (entry) => entry.inspector_class_name === 'StreamADInspector',
);
if (!inspector) throw new Error('config.yaml has no StreamADInspector entry');
/** 2025-12-01T00:00:00Z: a whole second, so an offset of 0 starts each generated second on one. */
const DAY = Date.UTC(2025, 11, 1);
const BATCH = 50;

interface Tally {
  benignIn: number;
  benignOn: number;
  infectedIn: number;
  infectedOn: number;
  infectedHosts: number;
  hostsWithNone: number;
}

function run(offsetMs: number): Tally {
  const t: Tally = {
    benignIn: 0,
    benignOn: 0,
    infectedIn: 0,
    infectedOn: 0,
    infectedHosts: 0,
    hostsWithNone: 0,
  };
  for (let seed = 1; seed <= Number(values.seeds); seed += 1) {
    const traffic = generateTraffic({
      seed,
      rate: Number(values.rate),
      durationSeconds: Number(values.duration),
      hosts: Number(values.hosts),
      startMs: DAY + offsetMs,
    });
    const infected = new Set(traffic.truth.filter((h) => h.role === 'dga').map((h) => h.ip));
    const bySubnet = nxdomainLinesBySubnet(traffic);
    const sentBy = new Map<string, number>();
    for (const lines of bySubnet.values()) {
      const model = inspectorModel(inspector!);
      let state: SubnetModel | undefined;
      const on = new Set<LogLine>();
      for (let at = 0; at < lines.length; at += BATCH) {
        const v = addLines(lines.slice(at, at + BATCH), state, model, inspector!, at);
        v.suspicious.forEach((l) => on.add(l));
        state = v.next;
      }
      if (state) closeOpenBin(state, model, inspector!).suspicious.forEach((l) => on.add(l));
      for (const l of lines) {
        const goes = on.has(l) ? 1 : 0;
        if (infected.has(l.src_ip)) {
          t.infectedIn += 1;
          t.infectedOn += goes;
        } else {
          t.benignIn += 1;
          t.benignOn += goes;
        }
        sentBy.set(l.src_ip, (sentBy.get(l.src_ip) ?? 0) + goes);
      }
    }
    t.infectedHosts += infected.size;
    for (const ip of infected) if (!sentBy.get(ip)) t.hostsWithNone += 1;
  }
  return t;
}

const pct = (part: number, whole: number) => `${((100 * part) / Math.max(1, whole)).toFixed(1)} %`;
console.log(
  `${values.seeds} seeds x ${values.hosts} hosts x ${values.duration} s at ${values.rate} lines/s; ` +
    `inspector ${inspector.name} (bins of ${inspector.time_range} ${inspector.time_type}, score_threshold ${inspector.score_threshold})`,
);
for (const offset of [0, 500]) {
  const t = run(offset);
  console.log(
    `start ${offset === 0 ? 'on a whole second      ' : 'half a second off one  '}` +
      `benign NXDOMAIN lines sent on ${t.benignOn} of ${t.benignIn} (${pct(t.benignOn, t.benignIn)}); ` +
      `infected hosts' ${t.infectedOn} of ${t.infectedIn} (${pct(t.infectedOn, t.infectedIn)}, ` +
      `${t.infectedIn - t.infectedOn} finished at the inspector); infected hosts with none sent on ${t.hostsWithNone} of ${t.infectedHosts}`,
  );
}
