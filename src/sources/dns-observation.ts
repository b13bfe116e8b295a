/**
 * One DNS transaction as a source saw it, whatever the source (a resolver's dnstap stream, a Zeek
 * `dns.log` row, a Suricata EVE event, a captured packet). Every source turns what it reads into
 * these; `log-line.ts` turns them into the pipeline's log lines under a configured field mapping,
 * so a new source is a decoder, never a change to the collector.
 *
 * A field the source did not carry is `undefined`, never a made-up value: the mapping decides what
 * a missing field becomes in the line (omitted, or a configured placeholder), and the collector's
 * `required_log_information` decides whether such a line is accepted.
 */
export interface DnsObservation {
  /** When the query was seen (the query's time where a source has both), Unix epoch microseconds. */
  readonly timeMicros: number;
  /** The host that asked: the resolver's client, or the packet's source for a query. */
  readonly clientIp: string;
  readonly clientPort?: number;
  /** The server that answered (the resolver itself for dnstap CLIENT_* messages). */
  readonly serverIp?: string;
  readonly serverPort?: number;
  /** The query name without its trailing dot, as sent (case kept). */
  readonly queryName: string;
  /** The query type's mnemonic (`A`, `AAAA`, `TXT`, ...) or `TYPE<n>` for a type without one. */
  readonly queryType: string;
  /** The response code's mnemonic (`NOERROR`, `NXDOMAIN`, `SERVFAIL`, ...); undefined when no response was seen. */
  readonly responseCode?: string;
  /** The addresses of the answer's A and AAAA records, in answer order; empty when there were none. */
  readonly answerIps: readonly string[];
  /** Every answer record's data as text (CNAME targets, TXT strings, addresses), in answer order. */
  readonly answers: readonly string[];
  /** Wire sizes in bytes of the query and of the response message, where known. */
  readonly querySize?: number;
  readonly responseSize?: number;
  readonly transport?: 'udp' | 'tcp' | 'dot' | 'doh' | 'doq';
}

/** The observation fields a log-line mapping may name (see `log-line.ts`). */
export const OBSERVATION_FIELDS = [
  'timestamp',
  'client_ip',
  'client_port',
  'server_ip',
  'server_port',
  'query_name',
  'query_type',
  'response_code',
  'answer_ip',
  'answer_ips',
  'answers',
  'query_size',
  'response_size',
  'transport',
] as const;
export type ObservationField = (typeof OBSERVATION_FIELDS)[number];
