import { ipText } from '../ip-text.ts';

/**
 * A captured frame down to its UDP or TCP payload: the link layer (Ethernet with VLAN tags, Linux
 * cooked v1 and v2, BSD loopback, raw IP), IPv4 or IPv6 (hop-by-hop, routing and destination
 * options headers skipped), then UDP or TCP. What is not such a segment is `skip` with why (ARP,
 * ICMP, an IP fragment: a DNS message in fragments is not reassembled, and is counted).
 */
export interface Segment {
  readonly transport: 'udp' | 'tcp';
  readonly srcIp: string;
  readonly dstIp: string;
  readonly srcPort: number;
  readonly dstPort: number;
  readonly payload: Buffer;
  /** TCP flags byte (FIN 0x01, SYN 0x02, RST 0x04); 0 for UDP. */
  readonly tcpFlags: number;
}

export type Layers =
  | { readonly kind: 'segment'; readonly segment: Segment }
  | { readonly kind: 'skip'; readonly reason: string };

const skip = (reason: string): Layers => ({ kind: 'skip', reason });

export function decodeLayers(linkType: number, frame: Buffer): Layers {
  const ip = ipPacket(linkType, frame);
  if (typeof ip === 'string') return skip(ip);
  if (ip.length < 1) return skip('empty IP packet');
  const version = (ip[0] ?? 0) >> 4;
  if (version === 4) return ipv4(ip);
  if (version === 6) return ipv6(ip);
  return skip(`IP version ${version}`);
}

/** The IP packet inside a frame of `linkType` (LINKTYPE_* numbers of the pcap format). */
function ipPacket(linkType: number, frame: Buffer): Buffer | string {
  switch (linkType) {
    case 0: // BSD loopback: a 4-byte address family in the capturing host's byte order.
      return frame.length < 4 ? 'short loopback frame' : frame.subarray(4);
    case 1: {
      let at = 12;
      let etherType = frame.length >= 14 ? frame.readUInt16BE(at) : -1;
      while ((etherType === 0x8100 || etherType === 0x88a8) && frame.length >= at + 6) {
        at += 4;
        etherType = frame.readUInt16BE(at);
      }
      if (etherType !== 0x0800 && etherType !== 0x86dd) return `ethertype 0x${etherType.toString(16)}`;
      return frame.subarray(at + 2);
    }
    case 101:
    case 12:
      return frame;
    case 113:
      return frame.length < 16 ? 'short Linux cooked frame' : frame.subarray(16);
    case 276:
      return frame.length < 20 ? 'short Linux cooked v2 frame' : frame.subarray(20);
    default:
      return `link type ${linkType}`;
  }
}

function ipv4(ip: Buffer): Layers {
  if (ip.length < 20) return skip('short IPv4 header');
  const headerLength = ((ip[0] ?? 0) & 0x0f) * 4;
  const total = Math.min(ip.readUInt16BE(2), ip.length);
  const fragment = ip.readUInt16BE(6);
  if ((fragment & 0x2000) !== 0 || (fragment & 0x1fff) !== 0) return skip('IPv4 fragment (not reassembled)');
  const src = `${ip[12]}.${ip[13]}.${ip[14]}.${ip[15]}`;
  const dst = `${ip[16]}.${ip[17]}.${ip[18]}.${ip[19]}`;
  return transport(ip[9] ?? 0, ip.subarray(headerLength, total), src, dst);
}

function ipv6(ip: Buffer): Layers {
  if (ip.length < 40) return skip('short IPv6 header');
  let next = ip[6] ?? 0;
  let body = ip.subarray(40, Math.min(40 + ip.readUInt16BE(4), ip.length));
  while (next === 0 || next === 43 || next === 60) {
    if (body.length < 8) return skip('short IPv6 extension header');
    const length = ((body[1] ?? 0) + 1) * 8;
    next = body[0] ?? 0;
    body = body.subarray(length);
  }
  if (next === 44) return skip('IPv6 fragment (not reassembled)');
  return transport(next, body, ipText(ip.subarray(8, 24)) ?? '', ipText(ip.subarray(24, 40)) ?? '');
}

function transport(protocol: number, body: Buffer, srcIp: string, dstIp: string): Layers {
  if (protocol === 17) {
    if (body.length < 8) return skip('short UDP header');
    const end = Math.min(body.readUInt16BE(4), body.length);
    const segment = {
      transport: 'udp' as const,
      srcIp,
      dstIp,
      srcPort: body.readUInt16BE(0),
      dstPort: body.readUInt16BE(2),
      payload: body.subarray(8, Math.max(8, end)),
      tcpFlags: 0,
    };
    return { kind: 'segment', segment };
  }
  if (protocol === 6) {
    if (body.length < 20) return skip('short TCP header');
    const offset = ((body[12] ?? 0) >> 4) * 4;
    const segment = {
      transport: 'tcp' as const,
      srcIp,
      dstIp,
      srcPort: body.readUInt16BE(0),
      dstPort: body.readUInt16BE(2),
      payload: body.subarray(offset),
      tcpFlags: body[13] ?? 0,
    };
    return { kind: 'segment', segment };
  }
  return skip(`IP protocol ${protocol}`);
}
