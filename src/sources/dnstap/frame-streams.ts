/**
 * Frame Streams (the transport dnstap rides on, farsightsecurity/fstrm): a byte stream of frames,
 * each a 32-bit big-endian length and that many bytes. A length of zero is the escape: a control
 * frame follows, its own 32-bit length, a 32-bit control type and fields (a 32-bit field type, a
 * 32-bit length, bytes; CONTENT_TYPE is the only field type defined).
 *
 * `FrameDecoder` is incremental (bytes arrive in any split) and never throws: a frame longer than
 * the bound or a control frame that does not parse ends the stream with an `error` event, because
 * after a bad length nothing in the stream can be trusted to be a frame boundary.
 */

export const CONTROL = { ACCEPT: 1, START: 2, STOP: 3, READY: 4, FINISH: 5 } as const;
export type ControlType = (typeof CONTROL)[keyof typeof CONTROL];
const CONTROL_NAMES = new Map<number, string>(Object.entries(CONTROL).map(([k, v]) => [v, k]));
export const controlName = (type: number): string => CONTROL_NAMES.get(type) ?? `control ${type}`;

export const FIELD_CONTENT_TYPE = 1;
export const DNSTAP_CONTENT_TYPE = 'protobuf:dnstap.Dnstap';
/** The specification bounds a control frame at 512 bytes. */
export const MAX_CONTROL_FRAME_BYTES = 512;
/** Default bound of a data frame: a dnstap message carries at most two 64 KiB DNS messages. */
export const DEFAULT_MAX_DATA_FRAME_BYTES = 256 * 1024;

export type FrameEvent =
  | { readonly kind: 'data'; readonly payload: Buffer }
  | { readonly kind: 'control'; readonly type: number; readonly contentTypes: readonly string[] }
  | { readonly kind: 'error'; readonly reason: string };

export class FrameDecoder {
  #chunks: Buffer[] = [];
  #buffered = 0;
  #failed = false;

  constructor(private readonly maxDataFrameBytes = DEFAULT_MAX_DATA_FRAME_BYTES) {}

  /** Bytes received and not yet part of a complete frame. */
  get buffered(): number {
    return this.#buffered;
  }

  /** Appends bytes and returns the frames they complete; after an `error` event, nothing more. */
  push(bytes: Buffer): FrameEvent[] {
    if (this.#failed) return [];
    if (bytes.length > 0) {
      this.#chunks.push(bytes);
      this.#buffered += bytes.length;
    }
    const events: FrameEvent[] = [];
    let buf = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks);
    let offset = 0;
    for (;;) {
      const event = this.#next(buf, offset);
      if (event === undefined) break;
      if (event.kind === 'error') {
        this.#failed = true;
        this.#chunks = [];
        this.#buffered = 0;
        events.push(event);
        return events;
      }
      events.push(event.event);
      offset = event.end;
    }
    buf = buf.subarray(offset);
    this.#chunks = buf.length > 0 ? [buf] : [];
    this.#buffered = buf.length;
    return events;
  }

  #next(
    buf: Buffer,
    offset: number,
  ): { kind: 'frame'; event: FrameEvent; end: number } | { kind: 'error'; reason: string } | undefined {
    if (buf.length - offset < 4) return undefined;
    const length = buf.readUInt32BE(offset);
    if (length > 0) {
      if (length > this.maxDataFrameBytes)
        return { kind: 'error', reason: `data frame of ${length} bytes exceeds ${this.maxDataFrameBytes}` };
      if (buf.length - offset - 4 < length) return undefined;
      const payload = buf.subarray(offset + 4, offset + 4 + length);
      return { kind: 'frame', event: { kind: 'data', payload }, end: offset + 4 + length };
    }
    if (buf.length - offset < 8) return undefined;
    const controlLength = buf.readUInt32BE(offset + 4);
    if (controlLength < 4 || controlLength > MAX_CONTROL_FRAME_BYTES)
      return {
        kind: 'error',
        reason: `control frame of ${controlLength} bytes (expected 4 to ${MAX_CONTROL_FRAME_BYTES})`,
      };
    if (buf.length - offset - 8 < controlLength) return undefined;
    const parsed = parseControl(buf.subarray(offset + 8, offset + 8 + controlLength));
    if (typeof parsed === 'string') return { kind: 'error', reason: parsed };
    return { kind: 'frame', event: parsed, end: offset + 8 + controlLength };
  }
}

/** A control frame's body (type and fields), or why it does not parse. */
export function parseControl(body: Buffer): FrameEvent | string {
  const type = body.readUInt32BE(0);
  const contentTypes: string[] = [];
  let offset = 4;
  while (offset < body.length) {
    if (body.length - offset < 8) return `${controlName(type)}: truncated field header`;
    const fieldType = body.readUInt32BE(offset);
    const fieldLength = body.readUInt32BE(offset + 4);
    offset += 8;
    if (fieldLength > body.length - offset)
      return `${controlName(type)}: field of ${fieldLength} bytes overruns the frame`;
    if (fieldType === FIELD_CONTENT_TYPE)
      contentTypes.push(body.toString('latin1', offset, offset + fieldLength));
    offset += fieldLength;
  }
  return { kind: 'control', type, contentTypes };
}

/** The bytes of one control frame (escape, length, type, one CONTENT_TYPE field per entry). */
export function encodeControl(type: number, contentTypes: readonly string[] = []): Buffer {
  const fields = contentTypes.map((t) => Buffer.from(t, 'latin1'));
  const bodyLength = 4 + fields.reduce((n, f) => n + 8 + f.length, 0);
  const out = Buffer.alloc(8 + bodyLength);
  out.writeUInt32BE(0, 0);
  out.writeUInt32BE(bodyLength, 4);
  out.writeUInt32BE(type, 8);
  let offset = 12;
  for (const f of fields) {
    out.writeUInt32BE(FIELD_CONTENT_TYPE, offset);
    out.writeUInt32BE(f.length, offset + 4);
    f.copy(out, offset + 8);
    offset += 8 + f.length;
  }
  return out;
}

/** The bytes of one data frame. */
export function encodeData(payload: Buffer): Buffer {
  const out = Buffer.alloc(4 + payload.length);
  out.writeUInt32BE(payload.length, 0);
  payload.copy(out, 4);
  return out;
}
