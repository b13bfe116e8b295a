/**
 * Packet capture decoding rate, ours against Debian's tshark, on the same file: a pcap of
 * `--packets` DNS packets over UDP built from the loopback fixture's queries and responses (ids and
 * times advanced so every pair is distinct). Prints packets/s and CPU seconds for: our reader and
 * decoder to log lines (one core, in process), and `tshark -T fields` with the fields a log line
 * needs (tshark's own CPU; parsing its output would come on top).
 * `node --import tsx scripts/bench-pcap.ts [--packets 200000]`
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_LOG_LINE_MAPPING, toLogLine } from '../src/sources/log-line.ts';
import { PcapDnsDecoder } from '../src/sources/pcap/pcap-dns-decoder.ts';
import { PcapStreamReader } from '../src/sources/pcap/pcap-reader.ts';

const arg = process.argv.indexOf('--packets');
const PACKETS = arg > 0 ? Number(process.argv[arg + 1]) : 200_000;
const fixture = readFileSync('test/fixtures/sources/dns-loopback.pcap');
const udp = new PcapStreamReader().push(fixture).slice(0, 10);

const dir = mkdtempSync(join(tmpdir(), 'bench-pcap-'));
const file = join(dir, 'big.pcap');
const parts: Buffer[] = [fixture.subarray(0, 24)];
for (let i = 0; i < PACKETS; i++) {
  const p = udp[i % udp.length];
  if (!p) break;
  const round = Math.floor(i / udp.length);
  const header = Buffer.alloc(16);
  const micros = p.timeMicros + round * 1000;
  header.writeUInt32LE(Math.floor(micros / 1e6), 0);
  header.writeUInt32LE(micros % 1e6, 4);
  header.writeUInt32LE(p.data.length, 8);
  header.writeUInt32LE(p.data.length, 12);
  const data = Buffer.from(p.data);
  // DNS id: Ethernet 14 + IPv4 20 + UDP 8 bytes in.
  data.writeUInt16BE(round % 65536, 42);
  parts.push(header, data);
}
writeFileSync(file, Buffer.concat(parts));

const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
const reader = new PcapStreamReader();
const decoder = new PcapDnsDecoder();
let lines = 0;
let bytes = 0;
const data = readFileSync(file);
for (let at = 0; at < data.length; at += 65536) {
  for (const packet of reader.push(data.subarray(at, at + 65536))) {
    for (const o of decoder.packet(packet).observations) {
      bytes += toLogLine(o, DEFAULT_LOG_LINE_MAPPING).length;
      lines += 1;
    }
  }
}
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
const cpu = process.cpuUsage(cpu0);
const ours = {
  packets: PACKETS,
  lines,
  bytes,
  seconds: +seconds.toFixed(2),
  packetsPerSecond: Math.round(PACKETS / seconds),
  cpuSeconds: +((cpu.user + cpu.system) / 1e6).toFixed(2),
};

const fields = [
  'frame.time_epoch',
  'ip.src',
  'ip.dst',
  'udp.srcport',
  'dns.id',
  'dns.flags.response',
  'dns.qry.name',
  'dns.qry.type',
  'dns.flags.rcode',
  'dns.a',
  'dns.aaaa',
];
const args = ['-r', file, '-n', '-T', 'fields', ...fields.flatMap((f) => ['-e', f])];
const t1 = process.hrtime.bigint();
const run = spawnSync('/usr/bin/time', ['-f', '%U %S', 'tshark', ...args], {
  maxBuffer: 1 << 30,
  encoding: 'utf8',
});
const tsharkSeconds = Number(process.hrtime.bigint() - t1) / 1e9;
const [user = '0', sys = '0'] = (run.stderr.trim().split('\n').pop() ?? '').split(' ');
const tshark = {
  version: execFileSync('tshark', ['--version'], { encoding: 'utf8' }).split('\n')[0],
  rows: run.stdout.split('\n').filter((l) => l !== '').length,
  seconds: +tsharkSeconds.toFixed(2),
  packetsPerSecond: Math.round(PACKETS / tsharkSeconds),
  cpuSeconds: +(Number(user) + Number(sys)).toFixed(2),
};
rmSync(dir, { recursive: true, force: true });
console.log(JSON.stringify({ ours, tshark }, null, 2));
