import type { DnsObservation } from '../dns-observation.ts';
import type { MalformedUnit } from '../observation-source.ts';
import { parseDns, type ParsedDns } from '../dns-message.ts';
import { decodeLayers, type Segment } from './packet-layers.ts';
import type { PcapPacket } from './pcap-reader.ts';

/**
 * Captured packets to observations: DNS over UDP and TCP on the configured ports, each response
 * paired with its query (same client and server address and port, transport and DNS id) so the
 * observation has the query's time and both sizes. TCP messages (2-byte length prefix) are
 * reassembled per direction from in-order segments. Memory is bounded and counted, by the packets'
 * own clock so a file decodes the same way however fast it is read:
 * - a query waits for its response at most `pairTimeoutMicros` and at most `maxPending` wait; one
 *   that leaves unanswered is an observation without a response code (`unanswered`);
 * - a response without its query (the capture started after it) is an observation on its own;
 * - at most `maxTcpStreams` half-streams are reassembled; the oldest is dropped (`tcpStreamsDropped`).
 */
export interface PcapDnsOptions {
  readonly ports: readonly number[];
  readonly maxPending: number;
  readonly pairTimeoutMicros: number;
  readonly maxTcpStreams: number;
}

export const DEFAULT_PCAP_DNS_OPTIONS: PcapDnsOptions = {
  ports: [53],
  maxPending: 10_000,
  pairTimeoutMicros: 5_000_000,
  maxTcpStreams: 1000,
};

export interface PcapDnsCounters {
  /** Packets that were not DNS on the configured ports (or not IP/UDP/TCP at all). */
  notDns: number;
  unanswered: number;
  tcpStreamsDropped: number;
}

interface Message {
  readonly timeMicros: number;
  readonly segment: Segment;
  readonly size: number;
  readonly dns: ParsedDns;
}

const MAX_TCP_BUFFER = 65_537;

export class PcapDnsDecoder {
  readonly counters: PcapDnsCounters = { notDns: 0, unanswered: 0, tcpStreamsDropped: 0 };
  readonly #options: PcapDnsOptions;
  readonly #ports: ReadonlySet<number>;
  readonly #pending = new Map<string, Message>();
  readonly #streams = new Map<string, Buffer>();

  constructor(options: Partial<PcapDnsOptions> = {}) {
    this.#options = { ...DEFAULT_PCAP_DNS_OPTIONS, ...options };
    this.#ports = new Set(this.#options.ports);
  }

  get pending(): number {
    return this.#pending.size;
  }

  /** The observations and bad messages of one packet, and those it makes leave the pairing memory. */
  packet(packet: PcapPacket): { observations: DnsObservation[]; malformed: MalformedUnit[] } {
    const observations: DnsObservation[] = [];
    const malformed: MalformedUnit[] = [];
    const layers = decodeLayers(packet.linkType, packet.data);
    const segment = layers.kind === 'segment' ? layers.segment : undefined;
    if (!segment || !(this.#ports.has(segment.srcPort) || this.#ports.has(segment.dstPort))) {
      if (layers.kind === 'skip' && layers.reason.includes('fragment'))
        malformed.push({ reason: layers.reason });
      else this.counters.notDns += 1;
      return { observations, malformed };
    }
    const payloads = segment.transport === 'udp' ? [segment.payload] : this.#tcpMessages(segment);
    for (const payload of payloads) {
      const dns = parseDns(payload);
      if (typeof dns === 'string') {
        const reason = packet.truncated ? `${dns} (captured shorter than sent: raise the snap length)` : dns;
        malformed.push({
          reason,
          excerpt: `${segment.srcIp}:${segment.srcPort} > ${segment.dstIp}:${segment.dstPort}`,
        });
        continue;
      }
      const message = { timeMicros: packet.timeMicros, segment, size: payload.length, dns };
      const observation = this.#message(message, observations);
      if (observation) observations.push(observation);
    }
    this.#expire(packet.timeMicros, observations);
    return { observations, malformed };
  }

  /** End of a file: every query still waiting leaves unanswered. */
  finish(): DnsObservation[] {
    const out = [...this.#pending.values()].map((m) => this.#unanswered(m));
    this.#pending.clear();
    this.#streams.clear();
    return out;
  }

  #message(m: Message, out: DnsObservation[]): DnsObservation | undefined {
    const s = m.segment;
    if (!m.dns.isResponse) {
      const key = `${s.transport}|${s.srcIp}|${s.srcPort}|${s.dstIp}|${s.dstPort}|${m.dns.id}`;
      const earlier = this.#pending.get(key);
      this.#pending.delete(key);
      if (earlier) out.push(this.#unanswered(earlier));
      this.#pending.set(key, m);
      return undefined;
    }
    const key = `${s.transport}|${s.dstIp}|${s.dstPort}|${s.srcIp}|${s.srcPort}|${m.dns.id}`;
    const query = this.#pending.get(key);
    this.#pending.delete(key);
    const base = query ? observationOf(query, 'client') : observationOf(m, 'server');
    return {
      ...base,
      responseCode: m.dns.responseCode,
      answerIps: m.dns.answerIps,
      answers: m.dns.answers,
      ...(query ? { querySize: query.size } : {}),
      responseSize: m.size,
    };
  }

  #unanswered(m: Message): DnsObservation {
    this.counters.unanswered += 1;
    return { ...observationOf(m, 'client'), querySize: m.size };
  }

  #expire(now: number, out: DnsObservation[]): void {
    for (const [key, m] of this.#pending) {
      if (
        m.timeMicros >= now - this.#options.pairTimeoutMicros &&
        this.#pending.size <= this.#options.maxPending
      )
        break;
      this.#pending.delete(key);
      out.push(this.#unanswered(m));
    }
  }

  /** Complete length-prefixed messages of a TCP half-stream, in segment order. */
  #tcpMessages(s: Segment): Buffer[] {
    const key = `${s.srcIp}|${s.srcPort}|${s.dstIp}|${s.dstPort}`;
    const closing = (s.tcpFlags & 0x05) !== 0;
    if (s.payload.length === 0) {
      if (closing) this.#streams.delete(key);
      return [];
    }
    const earlier = this.#streams.get(key);
    this.#streams.delete(key);
    let buffer = earlier ? Buffer.concat([earlier, s.payload]) : s.payload;
    const messages: Buffer[] = [];
    while (buffer.length >= 2 && buffer.length >= 2 + buffer.readUInt16BE(0)) {
      const length = buffer.readUInt16BE(0);
      messages.push(buffer.subarray(2, 2 + length));
      buffer = buffer.subarray(2 + length);
    }
    if (buffer.length > 0 && !closing && buffer.length <= MAX_TCP_BUFFER) {
      this.#streams.set(key, Buffer.from(buffer));
      if (this.#streams.size > this.#options.maxTcpStreams) {
        const oldest = this.#streams.keys().next().value;
        if (oldest !== undefined) this.#streams.delete(oldest);
        this.counters.tcpStreamsDropped += 1;
      }
    }
    return messages;
  }
}

/** The observation's addresses from a message sent by the `client` (a query) or by the `server` (a response). */
function observationOf(m: Message, sender: 'client' | 'server'): DnsObservation {
  const s = m.segment;
  const fromClient = sender === 'client';
  const name = m.dns.queryName;
  return {
    timeMicros: m.timeMicros,
    clientIp: fromClient ? s.srcIp : s.dstIp,
    clientPort: fromClient ? s.srcPort : s.dstPort,
    serverIp: fromClient ? s.dstIp : s.srcIp,
    serverPort: fromClient ? s.dstPort : s.srcPort,
    queryName: name.endsWith('.') ? name.slice(0, -1) : name,
    queryType: m.dns.queryType,
    answerIps: [],
    answers: [],
    transport: s.transport,
  };
}
