/**
 * The classic pcap file format (libpcap's, which `dumpcap -F pcap` and `tcpdump -w` write), read
 * incrementally from chunks of a file or a pipe: a 24-byte global header (magic, version, snap
 * length, link type) then records of a 16-byte header (seconds, micro- or nanoseconds, captured
 * and original length) and the captured bytes. Both byte orders and both time resolutions. pcapng
 * (dumpcap's default) is not read: the capture is asked for in pcap.
 */
export interface PcapPacket {
  readonly timeMicros: number;
  readonly linkType: number;
  readonly data: Buffer;
  /** Captured shorter than sent (snap length): the DNS message may be cut. */
  readonly truncated: boolean;
}

const MAGIC_MICROS = 0xa1b2c3d4;
const MAGIC_NANOS = 0xa1b23c4d;
/** A record longer than this is not a packet (a corrupt header): reading stops with an error. */
const MAX_RECORD = 262_144;

export class PcapStreamReader {
  #pending: Buffer = Buffer.alloc(0);
  #header: { littleEndian: boolean; nanos: boolean; linkType: number } | undefined;
  #error: string | undefined;

  /** Set once the stream is not pcap or is corrupt: nothing more is read. */
  get error(): string | undefined {
    return this.#error;
  }

  /** The packets completed by `chunk` (a record split across chunks waits for the rest). */
  push(chunk: Buffer): PcapPacket[] {
    if (this.#error !== undefined) return [];
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    const packets: PcapPacket[] = [];
    let at = 0;
    const buf = this.#pending;
    if (this.#header === undefined) {
      if (buf.length < 24) return packets;
      const header = readGlobalHeader(buf);
      if (typeof header === 'string') {
        this.#error = header;
        return packets;
      }
      this.#header = header;
      at = 24;
    }
    const { littleEndian, nanos, linkType } = this.#header;
    const u32 = (offset: number) => (littleEndian ? buf.readUInt32LE(offset) : buf.readUInt32BE(offset));
    while (buf.length - at >= 16) {
      const seconds = u32(at);
      const fraction = u32(at + 4);
      const captured = u32(at + 8);
      const original = u32(at + 12);
      if (captured > MAX_RECORD) {
        this.#error = `a pcap record of ${captured} bytes: not a packet (corrupt file)`;
        return packets;
      }
      if (buf.length - at - 16 < captured) break;
      const data = buf.subarray(at + 16, at + 16 + captured);
      const micros = seconds * 1_000_000 + (nanos ? Math.floor(fraction / 1000) : fraction);
      packets.push({ timeMicros: micros, linkType, data, truncated: captured < original });
      at += 16 + captured;
    }
    this.#pending = buf.subarray(at);
    return packets;
  }
}

function readGlobalHeader(buf: Buffer): { littleEndian: boolean; nanos: boolean; linkType: number } | string {
  const le = buf.readUInt32LE(0);
  const be = buf.readUInt32BE(0);
  const littleEndian = le === MAGIC_MICROS || le === MAGIC_NANOS;
  const magic = littleEndian ? le : be;
  if (magic !== MAGIC_MICROS && magic !== MAGIC_NANOS) {
    return be === 0x0a0d0d0a
      ? 'a pcapng file: capture in pcap format (dumpcap -F pcap, tcpdump -w) or convert it (editcap -F pcap)'
      : 'not a pcap file (unknown magic number)';
  }
  const linkType = littleEndian ? buf.readUInt32LE(20) : buf.readUInt32BE(20);
  return { littleEndian, nanos: magic === MAGIC_NANOS, linkType: linkType & 0x0fffffff };
}
