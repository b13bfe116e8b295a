/**
 * Tunnelling traffic in the styles of common tools and benign subdomain-heavy traffic (the hard
 * negatives), seeded and deterministic, and the Domainator's evaluation on them (no Kafka).
 */
export type { DnsQuery, QueryType, SessionOptions, TrafficStyle } from './query.ts';
export { queryLine } from './query.ts';
export { ALL_STYLES, BENIGN_STYLES, TUNNEL_STYLES, trafficStyle } from './styles.ts';
export { evaluateDomainator } from './evaluate.ts';
export { formatDomainatorReport } from './report-format.ts';
export type { DomainatorEvalOptions, DomainatorReport, DetectionRow, FalseAlarmRow } from './evaluate.ts';
