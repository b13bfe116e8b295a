import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import dnsPacket from 'dns-packet';

/**
 * A DNS server for tests and fixtures on `<address>:53`, UDP and TCP, answering a fixed zone: A with
 * two answers, AAAA, TXT, a CNAME chain; any other name NXDOMAIN.
 */
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

export async function startTinyDnsServer(address: string): Promise<{ close(): void }> {
  const udp = createSocket('udp4');
  udp.on('message', (msg, rinfo) => udp.send(answer(msg), rinfo.port, rinfo.address));
  await new Promise<void>((resolve) => udp.bind(53, address, resolve));
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
  await new Promise<void>((resolve) => tcp.listen(53, address, resolve));
  return {
    close() {
      udp.close();
      tcp.close();
    },
  };
}
