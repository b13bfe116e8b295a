/**
 * Makes test/fixtures/sources/dns-loopback.pcap: a tiny DNS server on 127.0.0.53:53 (UDP and TCP)
 * answering a fixed zone, `dumpcap -P` capturing port 53 on `lo` in pcap format, and `dig` asking it
 * from several loopback addresses (one per simulated host): A with two answers, AAAA, TXT, a CNAME
 * chain, an NXDOMAIN, and one query over TCP. Run as root (capture): `node --import tsx scripts/make-dns-pcap.ts [out]`.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import dnsPacket from 'dns-packet';

const out = process.argv[2] ?? 'test/fixtures/sources/dns-loopback.pcap';
const SERVER = '127.0.0.53';

const ZONE: Record<string, dnsPacket.Answer[]> = {
  'a.test/A': [
    { name: 'a.test', type: 'A', ttl: 60, data: '192.0.2.1' },
    { name: 'a.test', type: 'A', ttl: 60, data: '192.0.2.2' },
  ],
  'v6.test/AAAA': [{ name: 'v6.test', type: 'AAAA', ttl: 60, data: '2001:db8::5' }],
  'txt.test/TXT': [{ name: 'txt.test', type: 'TXT', ttl: 60, data: 'hello world' }],
  'www.test/A': [
    { name: 'www.test', type: 'CNAME', ttl: 60, data: 'a.test' },
    { name: 'a.test', type: 'A', ttl: 60, data: '192.0.2.1' },
  ],
};

function answer(query: Buffer): Buffer {
  const q = dnsPacket.decode(query);
  const question = q.questions?.[0];
  const answers = question ? ZONE[`${question.name.toLowerCase()}/${question.type}`] : undefined;
  return dnsPacket.encode({
    type: 'response',
    id: q.id ?? 0,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (answers ? 0 : 3),
    questions: q.questions ?? [],
    answers: answers ?? [],
  });
}

const udp = createSocket('udp4');
udp.on('message', (msg, rinfo) => udp.send(answer(msg), rinfo.port, rinfo.address));
await new Promise<void>((resolve) => udp.bind(53, SERVER, resolve));
const tcp = createServer((socket) => {
  let buffer = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    while (buffer.length >= 2 && buffer.length >= 2 + buffer.readUInt16BE(0)) {
      const reply = answer(buffer.subarray(2, 2 + buffer.readUInt16BE(0)));
      buffer = buffer.subarray(2 + buffer.readUInt16BE(0));
      const length = Buffer.alloc(2);
      length.writeUInt16BE(reply.length);
      socket.write(Buffer.concat([length, reply]));
    }
  });
});
await new Promise<void>((resolve) => tcp.listen(53, SERVER, resolve));

const capture = spawn('dumpcap', ['-q', '-i', 'lo', '-f', 'port 53', '-P', '-w', out], {
  stdio: 'inherit',
});
await new Promise((r) => setTimeout(r, 1500));
const dig = (source: string, ...args: string[]) =>
  promisify(execFile)('dig', [`@${SERVER}`, '-b', source, '+tries=1', '+time=2', '+noedns', ...args], {
    encoding: 'utf8',
  });
await dig('127.0.0.11', 'a.test', 'A');
await dig('127.0.0.12', 'v6.test', 'AAAA');
await dig('127.0.0.13', 'txt.test', 'TXT');
await dig('127.0.0.14', 'www.test', 'A');
await dig('127.0.0.15', 'xj3kq9zzp.test', 'A');
await dig('127.0.0.16', '+tcp', 'a.test', 'A');
await new Promise((r) => setTimeout(r, 1000));
const stopped = new Promise((r) => capture.on('exit', r));
capture.kill('SIGINT');
await stopped;
udp.close();
tcp.close();
console.log(`wrote ${out}`);
