import type { Random } from '../random.ts';

/** Query types the styles use. */
export type QueryType = 'A' | 'AAAA' | 'TXT' | 'CNAME' | 'MX' | 'NULL' | 'PTR' | 'SRV';

/** One DNS query as a resolver log shows it. */
export interface DnsQuery {
  /** Event time, ms since the epoch. */
  readonly atMs: number;
  /** The querying host (src_ip). */
  readonly host: string;
  /** The queried name, without the trailing dot. */
  readonly name: string;
  readonly qtype: QueryType;
  readonly rcode: 'NOERROR' | 'NXDOMAIN';
}

/** What a style needs to make one session: a host talking to one registrable domain. */
export interface SessionOptions {
  /** Seeds the session: the same options give the same queries. */
  readonly seed: number | string;
  readonly host: string;
  readonly startMs: number;
  /** Queries in the session. */
  readonly queries: number;
}

/**
 * A kind of traffic to one registrable domain: a tunnelling tool (`tunnel`) or a benign service
 * whose names carry ids, hashes or addresses in their subdomains (`benign`, the hard negatives).
 */
export interface TrafficStyle {
  readonly name: string;
  readonly kind: 'tunnel' | 'benign';
  /** What it imitates and why it is shaped this way (for the report and the reader). */
  readonly description: string;
  /** Queries a session of this style typically has (the evaluation's default). */
  readonly typicalQueries: number;
  session(o: SessionOptions): DnsQuery[];
}

/** A tab-separated log line: time (ISO), host, name, type, rcode. */
export function queryLine(q: DnsQuery): string {
  return [new Date(q.atMs).toISOString(), q.host, q.name, q.qtype, q.rcode].join('\t');
}

/**
 * Sends `count` queries from `start` with gaps drawn by `gap` (ms) and names by `name(i)`: the
 * skeleton of every style's session.
 */
export function paced(
  o: SessionOptions,
  gap: (i: number) => number,
  query: (i: number) => { name: string; qtype: QueryType; rcode?: DnsQuery['rcode'] },
): DnsQuery[] {
  const out: DnsQuery[] = [];
  let at = o.startMs;
  for (let i = 0; i < o.queries; i += 1) {
    if (i > 0) at += Math.max(1, Math.round(gap(i)));
    const q = query(i);
    out.push({ atMs: at, host: o.host, name: q.name, qtype: q.qtype, rcode: q.rcode ?? 'NOERROR' });
  }
  return out;
}

/** Exponentially distributed gap with the given mean (ms): independent arrivals. */
export function expGap(r: Random, meanMs: number): number {
  return -Math.log(1 - r.next()) * meanMs;
}
