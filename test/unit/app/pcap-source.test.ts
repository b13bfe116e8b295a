import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { PcapSource } from '../../../src/app/sensors/pcap-source.ts';
import type { DnsObservation } from '../../../src/sources/dns-observation.ts';

const fixture = fileURLToPath(new URL('../../fixtures/sources/dns-loopback.pcap', import.meta.url));

test('a pcap file through the live-source interface: every observation to the sink, counted', async () => {
  const source = new PcapSource({ file: fixture });
  const seen: DnsObservation[] = [];
  await source.start(
    (o) => seen.push(o) > 0,
    (u) => assert.fail(u.reason),
  );
  await source.ended;
  assert.deepEqual(
    seen.map((o) => [o.clientIp, o.queryName, o.responseCode]),
    [
      ['127.0.0.11', 'a.test', 'NOERROR'],
      ['127.0.0.12', 'v6.test', 'NOERROR'],
      ['127.0.0.13', 'txt.test', 'NOERROR'],
      ['127.0.0.14', 'www.test', 'NOERROR'],
      ['127.0.0.15', 'xj3kq9zzp.test', 'NXDOMAIN'],
      ['127.0.0.16', 'a.test', 'NOERROR'],
    ],
  );
  assert.deepEqual(source.counters, { received: 20, forwarded: 6, dropped: 0, malformed: 0, ignored: 14 });
  await source.stop();
});

test('a pcap source needs exactly one of a file and an interface', () => {
  assert.throws(() => new PcapSource({}), /exactly one of a file and an interface/);
});
