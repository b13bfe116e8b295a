import { DnstapDecoder } from '../src/sources/dnstap/dnstap-decoder.ts';
import { FrameDecoder } from '../src/sources/dnstap/frame-streams.ts';
import { DEFAULT_LOG_LINE_MAPPING, toLogLine } from '../src/sources/log-line.ts';
import { clientPair } from '../test/support/dnstap-frames.ts';
import {
  CONTROL,
  DNSTAP_CONTENT_TYPE,
  encodeControl,
  encodeData,
} from '../src/sources/dnstap/frame-streams.ts';

/**
 * The dnstap stream the sensor benchmark (and its short test) decodes: `transactions` query and
 * response pairs as Unbound sends them (CLIENT_QUERY then CLIENT_RESPONSE), from 1,000 client
 * addresses over 5,000 names, one in five NXDOMAIN, as one Frame Streams byte stream (START, data
 * frames, STOP) or as the bare payloads.
 */
export interface Workload {
  readonly payloads: Uint8Array[];
  /** START, every payload as a data frame, STOP. */
  readonly stream: Buffer;
}

export function dnstapWorkload(transactions: number): Workload {
  const distinct = Math.min(transactions, 20_000);
  const pairs = Array.from({ length: distinct }, (_, i) => {
    const client = `10.0.${Math.floor(i / 250) % 4}.${1 + (i % 250)}`;
    const name = `host${i % 5000}.example.org`;
    return i % 5 === 0
      ? clientPair(client, 1024 + (i % 60000), i & 0xffff, name, { rcode: 'NXDOMAIN' })
      : clientPair(client, 1024 + (i % 60000), i & 0xffff, name, {
          answers: [{ type: 'A', name, data: `192.0.2.${i % 250}` }],
        });
  });
  const payloads: Uint8Array[] = [];
  for (let i = 0; i < transactions; i += 1) {
    const p = pairs[i % distinct]!;
    payloads.push(p.query, p.response);
  }
  const stream = Buffer.concat([
    encodeControl(CONTROL.START, [DNSTAP_CONTENT_TYPE]),
    ...payloads.map((p) => encodeData(Buffer.from(p))),
    encodeControl(CONTROL.STOP),
  ]);
  return { payloads, stream };
}

const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

export interface PassFigures {
  frames: number;
  seconds: number;
  cpuMs: number;
  lines: number;
  /** Bytes of the log lines made (decode + log line only). */
  lineBytes?: number;
}

/** Decodes every payload (and makes its log line when `lines`); pure CPU, this thread only. */
export function decodePass(stream: Buffer, withLines: boolean): PassFigures {
  const frames = new FrameDecoder();
  const decoder = new DnstapDecoder();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  let lines = 0;
  let bytes = 0;
  const CHUNK = 64 * 1024;
  for (let off = 0; off < stream.length; off += CHUNK)
    for (const e of frames.push(stream.subarray(off, off + CHUNK))) {
      if (e.kind !== 'data') continue;
      n += 1;
      const r = decoder.decode(e.payload, Date.now());
      if (r.kind === 'observation' && withLines) {
        bytes += toLogLine(r.observation, DEFAULT_LOG_LINE_MAPPING).length;
        lines += 1;
      } else if (r.kind === 'observation') lines += 1;
    }
  return {
    frames: n,
    seconds: (performance.now() - t0) / 1000,
    cpuMs: cpuMs(process.cpuUsage(cpu0)),
    lines,
    lineBytes: bytes,
  };
}
