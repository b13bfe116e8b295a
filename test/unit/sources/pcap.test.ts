import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { DnsObservation } from '../../../src/sources/dns-observation.ts';
import { PcapDnsDecoder } from '../../../src/sources/pcap/pcap-dns-decoder.ts';
import { PcapStreamReader, type PcapPacket } from '../../../src/sources/pcap/pcap-reader.ts';
import { ipText } from '../../../src/sources/ip-text.ts';

const pcap = readFileSync(new URL('../../fixtures/sources/dns-loopback.pcap', import.meta.url));

function decode(packets: readonly PcapPacket[]) {
  const decoder = new PcapDnsDecoder();
  const observations: DnsObservation[] = [];
  const malformed: string[] = [];
  for (const p of packets) {
    const out = decoder.packet(p);
    observations.push(...out.observations);
    malformed.push(...out.malformed.map((m) => m.reason));
  }
  observations.push(...decoder.finish());
  return { observations, malformed, decoder };
}

const server = { serverIp: '127.0.0.53', serverPort: 53 };

test('the loopback capture of dig against a local server decodes field by field', () => {
  const reader = new PcapStreamReader();
  const packets = reader.push(pcap);
  assert.equal(reader.error, undefined);
  assert.equal(packets.length, 20);
  const { observations, malformed, decoder } = decode(packets);
  assert.deepEqual(malformed, []);
  assert.equal(observations.length, 6);
  const [a, v6, txt, cname, nx, tcp] = observations;
  assert.deepEqual(
    { ...a, clientPort: 0 },
    {
      timeMicros: 1796161799320842,
      clientIp: '127.0.0.11',
      clientPort: 0,
      ...server,
      queryName: 'a.test',
      queryType: 'A',
      responseCode: 'NOERROR',
      answerIps: ['192.0.2.1', '192.0.2.2'],
      answers: ['192.0.2.1', '192.0.2.2'],
      querySize: 24,
      responseSize: 68,
      transport: 'udp',
    },
  );
  assert.ok((a?.clientPort ?? 0) > 1023);
  assert.deepEqual([v6?.clientIp, v6?.queryType, v6?.answerIps], ['127.0.0.12', 'AAAA', ['2001:db8::5']]);
  assert.deepEqual(
    [txt?.clientIp, txt?.queryType, txt?.answers, txt?.answerIps],
    ['127.0.0.13', 'TXT', ['hello world'], []],
  );
  assert.deepEqual(
    [cname?.clientIp, cname?.answers, cname?.answerIps],
    ['127.0.0.14', ['a.test', '192.0.2.1'], ['192.0.2.1']],
  );
  assert.deepEqual(
    [
      nx?.timeMicros,
      nx?.clientIp,
      nx?.queryName,
      nx?.responseCode,
      nx?.answerIps,
      nx?.querySize,
      nx?.responseSize,
    ],
    [1796161799501582, '127.0.0.15', 'xj3kq9zzp.test', 'NXDOMAIN', [], 32, 32],
  );
  // Over TCP: the length prefix stripped, the message sizes without it.
  assert.deepEqual(
    [
      tcp?.timeMicros,
      tcp?.clientIp,
      tcp?.serverPort,
      tcp?.transport,
      tcp?.answerIps,
      tcp?.querySize,
      tcp?.responseSize,
    ],
    [1796161799543135, '127.0.0.16', 53, 'tcp', ['192.0.2.1', '192.0.2.2'], 24, 68],
  );
  assert.equal(decoder.counters.unanswered, 0);
  assert.equal(decoder.counters.notDns, 0);
});

test('read in small chunks the same packets come out; pcapng and garbage are refused with a reason', () => {
  const reader = new PcapStreamReader();
  const packets: PcapPacket[] = [];
  for (let at = 0; at < pcap.length; at += 7) packets.push(...reader.push(pcap.subarray(at, at + 7)));
  assert.deepEqual(
    decode(packets).observations.map((o) => o.queryName),
    ['a.test', 'v6.test', 'txt.test', 'www.test', 'xj3kq9zzp.test', 'a.test'],
  );
  const pcapng = new PcapStreamReader();
  pcapng.push(Buffer.from('0a0d0d0a' + '00'.repeat(40), 'hex'));
  assert.match(pcapng.error ?? '', /pcapng/);
  const garbage = new PcapStreamReader();
  garbage.push(Buffer.alloc(64, 7));
  assert.equal(garbage.error, 'not a pcap file (unknown magic number)');
});

test('a query without its response leaves unanswered at the end; a cut DNS message is malformed, not thrown', () => {
  const packets = new PcapStreamReader().push(pcap);
  const query = packets[8];
  const response = packets[9];
  assert.ok(query && response);
  const only = decode([query]);
  assert.deepEqual(
    only.observations.map((o) => [o.queryName, o.responseCode, o.clientIp]),
    [['xj3kq9zzp.test', undefined, '127.0.0.15']],
  );
  assert.equal(only.decoder.counters.unanswered, 1);
  const cut = { ...response, data: response.data.subarray(0, response.data.length - 10), truncated: true };
  const bad = decode([cut]);
  assert.equal(bad.observations.length, 0);
  assert.match(bad.malformed[0] ?? '', /does not parse.*captured shorter than sent/);
  assert.equal(ipText(Buffer.from('20010db8000000000000000000000005', 'hex')), '2001:db8::5');
});
