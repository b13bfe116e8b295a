/**
 * Makes test/fixtures/sources/dns-loopback.pcap: a tiny DNS server on 127.0.0.53:53 (UDP and TCP)
 * answering a fixed zone, `dumpcap -P` capturing port 53 on `lo` in pcap format, and `dig` asking it
 * from several loopback addresses (one per simulated host): A with two answers, AAAA, TXT, a CNAME
 * chain, an NXDOMAIN, and one query over TCP. Run as root (capture): `node --import tsx scripts/make-dns-pcap.ts [out]`.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { startTinyDnsServer } from '../test/helpers/tiny-dns-server.ts';

const out = process.argv[2] ?? 'test/fixtures/sources/dns-loopback.pcap';
const SERVER = '127.0.0.53';
const server = await startTinyDnsServer(SERVER);

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
server.close();
console.log(`wrote ${out}`);
