import type { DnsObservation } from '../dns-observation.ts';
import type { MalformedUnit } from '../observation-source.ts';
import { parseDns, type ParsedDns } from '../dns-message.ts';
import { decodeDnstap, type DnstapFrame, type DnstapMessageType } from './dnstap-schema.ts';
import { ipText } from '../ip-text.ts';
import { PairingTable, type PairingCounters } from './pairing.ts';

/**
 * Turns dnstap data frames into observations. Which message types produce one is configured
 * (`observe`):
 * - a `*_RESPONSE` in `observe` gives one observation, with its query's time and size when the
 *   matching `*_QUERY` came first and is not itself observed (paired through a bounded table);
 * - a `*_QUERY` in `observe` gives one observation at once, without response fields;
 * - any other message is counted as ignored.
 * The client of an observation is the message's query address (the initiator, as the dnstap
 * specification defines it), its server the response address. A frame that does not decode, lacks
 * the addresses or message it needs, or carries a DNS message that does not parse is malformed, with
 * its reason; the decoder never throws.
 */
export interface DnstapDecoderOptions {
  /** Default `['CLIENT_RESPONSE']`. */
  readonly observe?: readonly DnstapMessageType[];
  /** Waiting queries kept for pairing (default 100,000) and how long (default 10 s). */
  readonly pairingCapacity?: number;
  readonly pairingTimeoutMs?: number;
}

export type DecodeResult =
  | { readonly kind: 'observation'; readonly observation: DnsObservation; readonly identity?: string }
  | { readonly kind: 'ignored' }
  | { readonly kind: 'malformed'; readonly unit: MalformedUnit };

export interface DecoderCounters extends PairingCounters {
  /** Question and answer records of a type the DNS library does not know (kept as `TYPE<n>`). */
  unknownRecordTypes: number;
}

export const DEFAULT_OBSERVE: readonly DnstapMessageType[] = ['CLIENT_RESPONSE'];
export const DEFAULT_PAIRING_CAPACITY = 100_000;
export const DEFAULT_PAIRING_TIMEOUT_MS = 10_000;

const EXCERPT_BYTES = 64;
const excerpt = (bytes: Uint8Array): string => Buffer.from(bytes.subarray(0, EXCERPT_BYTES)).toString('hex');
const malformed = (reason: string, bytes: Uint8Array): DecodeResult => ({
  kind: 'malformed',
  unit: { reason, excerpt: excerpt(bytes) },
});

export class DnstapDecoder {
  readonly #observe: ReadonlySet<DnstapMessageType>;
  readonly #pairing: PairingTable;
  #unknownRecordTypes = 0;

  constructor(o: DnstapDecoderOptions = {}) {
    this.#observe = new Set(o.observe ?? DEFAULT_OBSERVE);
    this.#pairing = new PairingTable(
      o.pairingCapacity ?? DEFAULT_PAIRING_CAPACITY,
      o.pairingTimeoutMs ?? DEFAULT_PAIRING_TIMEOUT_MS,
    );
  }

  get counters(): DecoderCounters {
    return { ...this.#pairing.counters, unknownRecordTypes: this.#unknownRecordTypes };
  }

  /** Queries waiting for their response. */
  get waiting(): number {
    return this.#pairing.size;
  }

  /** Expires waiting queries past the timeout (called on a timer when no frames arrive). */
  expire(nowMs: number): void {
    this.#pairing.expire(nowMs);
  }

  decode(payload: Uint8Array, nowMs: number): DecodeResult {
    try {
      return this.#decode(payload, nowMs);
    } catch (e) {
      // A library's unforeseen throw on hostile input costs one frame, not the sensor.
      return malformed(`undecodable: ${e instanceof Error ? e.message : String(e)}`, payload);
    }
  }

  #decode(payload: Uint8Array, nowMs: number): DecodeResult {
    const frame = decodeDnstap(payload);
    if (typeof frame === 'string') return malformed(frame, payload);
    const isResponse = frame.type.endsWith('_RESPONSE');
    const observed = this.#observe.has(frame.type);
    const pairedType = (
      isResponse ? frame.type.replace(/_RESPONSE$/, '_QUERY') : frame.type.replace(/_QUERY$/, '_RESPONSE')
    ) as DnstapMessageType;
    const keptForPairing = !observed && !isResponse && this.#observe.has(pairedType);
    if (!observed && !keptForPairing) return { kind: 'ignored' };
    const message = isResponse ? frame.responseMessage : frame.queryMessage;
    if (message === undefined)
      return malformed(`${frame.type} without ${isResponse ? 'response' : 'query'}_message`, payload);
    const dns = parseDns(message);
    if (typeof dns === 'string') return malformed(`${frame.type}: ${dns}`, message);
    this.#unknownRecordTypes += dns.unknownTypes;
    const clientIp = frame.queryAddress === undefined ? undefined : ipText(frame.queryAddress);
    if (clientIp === undefined) return malformed(`${frame.type} without a valid query_address`, payload);
    const key = `${clientIp}|${frame.queryPort ?? ''}|${dns.id}|${dns.queryName.toLowerCase()}|${dns.queryType}`;
    if (!observed) {
      this.#pairing.add(key, { timeMicros: frame.queryTimeMicros, size: message.length }, nowMs);
      return { kind: 'ignored' };
    }
    const query = isResponse && !this.#observe.has(pairedType) ? this.#pairing.take(key, nowMs) : undefined;
    return {
      kind: 'observation',
      observation: observation(frame, dns, clientIp, nowMs, isResponse, query),
      ...(frame.identity !== undefined ? { identity: frame.identity } : {}),
    };
  }
}

function observation(
  frame: DnstapFrame,
  dns: ParsedDns,
  clientIp: string,
  nowMs: number,
  isResponse: boolean,
  query: { timeMicros?: number; size: number } | undefined,
): DnsObservation {
  const serverIp = frame.responseAddress === undefined ? undefined : ipText(frame.responseAddress);
  const timeMicros = query?.timeMicros ?? frame.queryTimeMicros ?? frame.responseTimeMicros ?? nowMs * 1000;
  const size = query?.size ?? frame.queryMessage?.length;
  return {
    timeMicros,
    clientIp,
    ...(frame.queryPort !== undefined ? { clientPort: frame.queryPort } : {}),
    ...(serverIp !== undefined ? { serverIp } : {}),
    ...(frame.responsePort !== undefined ? { serverPort: frame.responsePort } : {}),
    queryName: dns.queryName,
    queryType: dns.queryType,
    ...(isResponse ? { responseCode: dns.responseCode } : {}),
    answerIps: isResponse ? dns.answerIps : [],
    answers: isResponse ? dns.answers : [],
    ...(size !== undefined ? { querySize: size } : {}),
    ...(isResponse && frame.responseMessage !== undefined
      ? { responseSize: frame.responseMessage.length }
      : {}),
    ...(frame.transport !== undefined ? { transport: frame.transport } : {}),
  };
}
