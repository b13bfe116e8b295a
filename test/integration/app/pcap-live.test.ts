import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { PcapSource } from '../../../src/app/sensors/pcap-source.ts';
import type { DnsObservation } from '../../../src/sources/dns-observation.ts';
import { startTinyDnsServer } from '../../helpers/tiny-dns-server.ts';

/** Live capture on `lo` with Debian's dumpcap (needs capture rights: root or the wireshark group). */
test('a live capture on lo: dig over UDP and TCP from their own loopback addresses, each query once', async () => {
  const server = await startTinyDnsServer('127.53.0.54');
  const source = new PcapSource({ interface: 'lo' });
  const seen: DnsObservation[] = [];
  try {
    await source.start(
      (o) => seen.push(o) > 0,
      (u) => assert.fail(u.reason),
    );
    await new Promise((r) => setTimeout(r, 1500));
    const dig = (from: string, ...args: string[]) =>
      promisify(execFile)('dig', ['@127.53.0.54', '-b', from, '+tries=1', '+time=2', '+noedns', ...args]);
    await dig('127.0.0.31', 'a.test', 'A');
    await dig('127.0.0.32', 'nx-live.test', 'A');
    await dig('127.0.0.33', '+tcp', 'v6.test', 'AAAA');
    const deadline = Date.now() + 10_000;
    while (seen.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  } finally {
    await source.stop();
    server.close();
  }
  const mine = seen.filter((o) => o.serverIp === '127.53.0.54');
  assert.deepEqual(
    mine.map((o) => [o.clientIp, o.queryName, o.queryType, o.responseCode, o.answerIps, o.transport]),
    [
      ['127.0.0.31', 'a.test', 'A', 'NOERROR', ['192.0.2.1', '192.0.2.2'], 'udp'],
      ['127.0.0.32', 'nx-live.test', 'A', 'NXDOMAIN', [], 'udp'],
      ['127.0.0.33', 'v6.test', 'AAAA', 'NOERROR', ['2001:db8::5'], 'tcp'],
    ],
  );
  assert.equal(source.extra.kernelDropped, 0);
});
