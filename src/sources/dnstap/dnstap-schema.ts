import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';
import { sourcePath } from '../../assets/project.ts';
import { MESSAGE_TYPES, type DnstapMessageType } from './message-types.ts';

export { MESSAGE_TYPES, type DnstapMessageType } from './message-types.ts';

/**
 * The dnstap protobuf schema, parsed at run time from `dnstap.proto` (written from the public
 * specification; no generated code), and the typed view of one decoded frame the rest of the
 * decoder works on. Addresses stay raw bytes here; `dnstap-decoder.ts` formats them.
 */

const SOCKET_PROTOCOLS = ['udp', 'tcp', 'dot', 'doh', 'udp', 'tcp', 'doq'] as const;
export type Transport = (typeof SOCKET_PROTOCOLS)[number];

/** One dnstap message as the schema decodes it; fields the sender left out are undefined. */
export interface DnstapFrame {
  readonly identity?: string;
  readonly type: DnstapMessageType;
  readonly transport?: Transport;
  readonly queryAddress?: Uint8Array;
  readonly responseAddress?: Uint8Array;
  readonly queryPort?: number;
  readonly responsePort?: number;
  /** Epoch microseconds. */
  readonly queryTimeMicros?: number;
  readonly responseTimeMicros?: number;
  readonly queryMessage?: Uint8Array;
  readonly responseMessage?: Uint8Array;
}

/** The schema stays in the source tree; the bundle carries code only. */
function protoPath(): string {
  return sourcePath('sources/dnstap/dnstap.proto');
}

let dnstapType: protobuf.Type | undefined;

function schema(): protobuf.Type {
  dnstapType ??= protobuf
    .parse(readFileSync(protoPath(), 'utf8'), { keepCase: true })
    .root.lookupType('dnstap.Dnstap');
  return dnstapType;
}

/** Loads the schema now (a missing or broken .proto fails at start, not at the first frame). */
export function loadDnstapSchema(): void {
  schema();
}

/** Encodes a frame (tests, the benchmark's synthetic sender). */
export function encodeDnstap(frame: DnstapFrame): Uint8Array {
  const type = schema();
  const socketProtocol =
    frame.transport === undefined ? undefined : SOCKET_PROTOCOLS.indexOf(frame.transport) + 1;
  const time = (micros: number | undefined) =>
    micros === undefined ? {} : { sec: Math.floor(micros / 1e6), nsec: Math.round((micros % 1e6) * 1000) };
  const q = time(frame.queryTimeMicros);
  const r = time(frame.responseTimeMicros);
  const message = {
    type: MESSAGE_TYPES.indexOf(frame.type) + 1,
    socket_family: frame.queryAddress?.length === 16 ? 2 : 1,
    socket_protocol: socketProtocol,
    query_address: frame.queryAddress,
    response_address: frame.responseAddress,
    query_port: frame.queryPort,
    response_port: frame.responsePort,
    query_time_sec: 'sec' in q ? q.sec : undefined,
    query_time_nsec: 'nsec' in q ? q.nsec : undefined,
    response_time_sec: 'sec' in r ? r.sec : undefined,
    response_time_nsec: 'nsec' in r ? r.nsec : undefined,
    query_message: frame.queryMessage,
    response_message: frame.responseMessage,
  };
  const identity = frame.identity === undefined ? undefined : Buffer.from(frame.identity);
  return type.encode(type.fromObject({ identity, type: 1, message })).finish();
}

interface RawMessage {
  type?: number;
  socket_protocol?: number;
  query_address?: Uint8Array;
  response_address?: Uint8Array;
  query_port?: number;
  response_port?: number;
  query_time_sec?: number | { toNumber(): number };
  query_time_nsec?: number;
  response_time_sec?: number | { toNumber(): number };
  response_time_nsec?: number;
  query_message?: Uint8Array;
  response_message?: Uint8Array;
}

interface RawDnstap {
  identity?: Uint8Array;
  type?: number;
  message?: RawMessage | null;
}

/** Decodes one data frame's payload; a string says why it is not a dnstap message we can use. */
export function decodeDnstap(payload: Uint8Array): DnstapFrame | string {
  let raw: RawDnstap;
  try {
    raw = schema().decode(payload) as RawDnstap;
  } catch (e) {
    return `protobuf: ${e instanceof Error ? e.message : String(e)}`;
  }
  const m = raw.message;
  if (raw.type !== 1 || m === undefined || m === null) return 'dnstap frame without a message';
  const type = MESSAGE_TYPES[(m.type ?? 0) - 1];
  if (type === undefined) return `unknown dnstap message type ${m.type}`;
  const has = (field: keyof RawMessage): boolean => Object.prototype.hasOwnProperty.call(m, field);
  return {
    type,
    identity:
      raw.identity !== undefined && raw.identity.length > 0
        ? Buffer.from(raw.identity).toString('utf8')
        : undefined,
    transport: SOCKET_PROTOCOLS[(m.socket_protocol ?? 0) - 1],
    queryAddress: has('query_address') ? m.query_address : undefined,
    responseAddress: has('response_address') ? m.response_address : undefined,
    queryPort: has('query_port') ? m.query_port : undefined,
    responsePort: has('response_port') ? m.response_port : undefined,
    queryTimeMicros: has('query_time_sec') ? micros(m.query_time_sec, m.query_time_nsec) : undefined,
    responseTimeMicros: has('response_time_sec')
      ? micros(m.response_time_sec, m.response_time_nsec)
      : undefined,
    queryMessage: has('query_message') ? m.query_message : undefined,
    responseMessage: has('response_message') ? m.response_message : undefined,
  };
}

function micros(sec: RawMessage['query_time_sec'], nsec: number | undefined): number {
  const s = typeof sec === 'number' ? sec : (sec?.toNumber() ?? 0);
  return s * 1e6 + Math.floor((nsec ?? 0) / 1000);
}
