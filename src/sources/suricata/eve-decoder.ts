import { isIP } from 'node:net';
import type { DnsObservation } from '../dns-observation.ts';
import { excerpt, type DecodeOutcome, type LineDecoder, type LineOrigin } from '../line-decoder.ts';
import { readEveLine, type EveAnswer, type EveQuery } from './eve-event.ts';

/**
 * Suricata EVE DNS events as observations, pairing each answer with its query (same flow and DNS
 * id) so the observation carries the query's time and the asking host whatever direction Suricata
 * wrote the answer in. Pairing memory is bounded and counted:
 * - a query waits at most `pairWindowMicros` (by the events' own clock) and at most `maxPending`
 *   queries wait; a query that leaves unanswered becomes an observation without a response code
 *   (the collector decides what such a line is worth), counted in `unanswered`;
 * - an answer without a waiting query (Suricata logs no queries, or the query came before the
 *   file did) is an observation on its own, its client taken from the side that is not port 53;
 * - v1's per-record answer events of one response are merged while they follow one another; the
 *   merged response is released by the next other line or when the caller has read all there is.
 * The memory is JSON (`save`), stored by the caller with the file position.
 */
export interface EveDecoderOptions {
  readonly maxPending: number;
  readonly pairWindowMicros: number;
}

export const DEFAULT_EVE_DECODER_OPTIONS: EveDecoderOptions = {
  maxPending: 1000,
  pairWindowMicros: 5_000_000,
};

interface Pending {
  readonly origin: LineOrigin;
  readonly query: EveQuery;
}

interface Group {
  readonly origin: LineOrigin;
  readonly answer: EveAnswer;
}

interface Saved {
  readonly pending: [string, Pending][];
  readonly group?: Group;
  readonly newest: number;
  readonly unanswered: number;
}

export interface EveDecoder extends LineDecoder {
  /** Queries that left the pairing memory unanswered (window passed or memory full), in total. */
  readonly unanswered: number;
  readonly pending: number;
}

export function createEveDecoder(saved: unknown, options = DEFAULT_EVE_DECODER_OPTIONS): EveDecoder {
  const state = isSaved(saved) ? saved : undefined;
  // Insertion order is arrival order: the first entry is the oldest query.
  const pending = new Map<string, Pending>(state?.pending ?? []);
  let group: Group | undefined = state?.group;
  let newest = state?.newest ?? 0;
  let unanswered = state?.unanswered ?? 0;

  const leaveUnanswered = (entry: Pending): DecodeOutcome => {
    unanswered += 1;
    return { kind: 'observation', origin: entry.origin, observation: fromQuery(entry.query) };
  };
  const release = (): DecodeOutcome[] => {
    if (group === undefined) return [];
    const { origin, answer } = group;
    group = undefined;
    return [answered(origin, answer)];
  };
  const answered = (origin: LineOrigin, answer: EveAnswer): DecodeOutcome => {
    const entry = pending.get(answer.key);
    pending.delete(answer.key);
    const observation = fromAnswer(answer, entry?.query);
    if (observation.queryName === '')
      return {
        kind: 'malformed',
        origin,
        reason: 'an answer without a question name and no query to pair with',
        text: answer.key,
      };
    return { kind: 'observation', origin, observation };
  };
  const expire = (): DecodeOutcome[] => {
    const out: DecodeOutcome[] = [];
    for (const [key, entry] of pending) {
      if (entry.query.timeMicros >= newest - options.pairWindowMicros && pending.size <= options.maxPending)
        break;
      pending.delete(key);
      out.push(leaveUnanswered(entry));
    }
    return out;
  };

  return {
    decode(text: string, origin: LineOrigin): DecodeOutcome[] {
      const line = readEveLine(text);
      if (line.kind === 'answer' && line.shape === 'per-record' && group?.answer.key === line.key) {
        group = {
          origin: group.origin,
          answer: { ...group.answer, records: [...group.answer.records, ...line.records] },
        };
        return [{ kind: 'ignored', origin }];
      }
      const out = release();
      if (line.kind === 'bad')
        return [...out, { kind: 'malformed', origin, reason: line.reason, text: excerpt(text) }];
      if (line.kind === 'other') return [...out, { kind: 'ignored', origin }];
      newest = Math.max(newest, line.timeMicros);
      if (line.kind === 'query') {
        const earlier = pending.get(line.key);
        pending.delete(line.key);
        if (earlier) out.push(leaveUnanswered(earlier));
        pending.set(line.key, { origin, query: line });
        out.push({ kind: 'ignored', origin });
      } else if (line.shape === 'per-record') {
        group = { origin, answer: line };
      } else {
        out.push(answered(origin, line));
      }
      return [...out, ...expire()];
    },
    startFile() {},
    drain: release,
    save: (): Saved => ({ pending: [...pending], ...(group ? { group } : {}), newest, unanswered }),
    get unanswered() {
      return unanswered;
    },
    get pending() {
      return pending.size;
    },
  };
}

function fromQuery(query: EveQuery): DnsObservation {
  const e = query.endpoints;
  return {
    timeMicros: query.timeMicros,
    clientIp: e.srcIp,
    clientPort: e.srcPort,
    serverIp: e.destIp,
    serverPort: e.destPort,
    queryName: trimDot(query.name),
    queryType: query.type,
    answerIps: [],
    answers: [],
    transport: e.transport,
  };
}

function fromAnswer(answer: EveAnswer, query: EveQuery | undefined): DnsObservation {
  const records = answer.records;
  const answerIps = records
    .filter((r) => (r.type === 'A' || r.type === 'AAAA' || r.type === undefined) && isIP(r.data) !== 0)
    .map((r) => r.data);
  const base = query ? fromQuery(query) : unpairedBase(answer);
  return { ...base, responseCode: answer.rcode, answerIps, answers: records.map((r) => r.data) };
}

/** An answer on its own: the client is the side that is not the DNS server's port 53. */
function unpairedBase(answer: EveAnswer): DnsObservation {
  const e = answer.endpoints;
  const clientIsSource = e.destPort === 53 && e.srcPort !== 53;
  const first = answer.records[0];
  return {
    timeMicros: answer.timeMicros,
    clientIp: clientIsSource || e.destIp === undefined ? e.srcIp : e.destIp,
    clientPort: clientIsSource ? e.srcPort : e.destPort,
    serverIp: clientIsSource ? e.destIp : e.srcIp,
    serverPort: clientIsSource ? e.destPort : e.srcPort,
    queryName: trimDot(answer.name ?? first?.name ?? ''),
    queryType: answer.type ?? first?.type ?? 'TYPE0',
    answerIps: [],
    answers: [],
    transport: e.transport,
  };
}

const trimDot = (name: string) => (name.endsWith('.') ? name.slice(0, -1) : name);

function isSaved(value: unknown): value is Saved {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return Array.isArray(v.pending) && typeof v.newest === 'number' && typeof v.unanswered === 'number';
}
