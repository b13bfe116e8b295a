/**
 * Decoding rate of the file sources on one core, in process (no Kafka): Zeek TSV rows, Zeek JSON
 * rows and Suricata EVE v2 query/answer pairs decoded and written as log lines under the default
 * mapping. CPU time per row is the figure to read on a shared machine.
 * `node --import tsx scripts/bench-log-sources.ts [--rows 200000]`
 */
import { readFileSync } from 'node:fs';
import type { LineDecoder } from '../src/sources/line-decoder.ts';
import { DEFAULT_LOG_LINE_MAPPING, toLogLine } from '../src/sources/log-line.ts';
import { createEveDecoder } from '../src/sources/suricata/eve-decoder.ts';
import { createZeekJsonDecoder } from '../src/sources/zeek/zeek-json.ts';
import { createZeekTsvDecoder } from '../src/sources/zeek/zeek-tsv.ts';

const arg = process.argv.indexOf('--rows');
const ROWS = arg > 0 ? Number(process.argv[arg + 1]) : 200_000;
const fixture = (name: string) => readFileSync(`test/fixtures/sources/${name}`, 'utf8').split('\n');

function measure(name: string, decoder: LineDecoder, lines: readonly string[], rows: number) {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  let out = 0;
  lines.forEach((line, i) => {
    for (const o of decoder.decode(line, { file: 'f', offset: i }))
      if (o.kind === 'observation')
        out += toLogLine(o.observation, DEFAULT_LOG_LINE_MAPPING).length > 0 ? 1 : 0;
  });
  const cpu = process.cpuUsage(cpu0);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return {
    name,
    rows,
    lines: out,
    seconds: +seconds.toFixed(2),
    cpuSeconds: +cpuSeconds.toFixed(2),
    rowsPerCpuSecond: Math.round(rows / cpuSeconds),
  };
}

const tsv = fixture('zeek-dns.log');
const tsvRow = tsv[8] ?? '';
const tsvLines = [
  ...tsv.slice(0, 8),
  ...Array.from({ length: ROWS }, (_, i) => tsvRow.replace('example.com', `n${i}.example.com`)),
];
const json = fixture('zeek-dns.json')[0] ?? '';
const jsonLines = Array.from({ length: ROWS }, (_, i) => json.replace('example.com', `n${i}.example.com`));
const eve = fixture('suricata-eve-v2.json');
const eveLines = Array.from({ length: ROWS / 2 }, (_, i) => [
  (eve[0] ?? '').replace('"flow_id":2001', `"flow_id":${i}`),
  (eve[1] ?? '').replace('"flow_id":2001', `"flow_id":${i}`),
]).flat();
console.log(
  JSON.stringify(
    [
      measure('zeek-tsv', createZeekTsvDecoder(undefined), tsvLines, ROWS),
      measure('zeek-json', createZeekJsonDecoder(), jsonLines, ROWS),
      measure('suricata-eve v2 (rows = events)', createEveDecoder(undefined), eveLines, ROWS),
    ],
    null,
    2,
  ),
);
