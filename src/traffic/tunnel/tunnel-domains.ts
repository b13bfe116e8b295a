import type { Random } from '../random.ts';

const FIRST = ['cloud', 'sync', 'update', 'data', 'api', 'cdn', 'static', 'secure', 'mail', 'web'];
const SECOND = ['files', 'metrics', 'stats', 'node', 'edge', 'hub', 'box', 'zone', 'link', 'check'];
const TLDS = ['com', 'net', 'org', 'io', 'info', 'xyz', 'co.uk'];

/** A plausible registrable domain an attacker would register for a tunnel (`syncmetrics.io`). */
export function tunnelDomain(r: Random): string {
  return `${r.pick(FIRST)}${r.pick(SECOND)}${r.int(0, 9) < 3 ? String(r.int(1, 99)) : ''}.${r.pick(TLDS)}`;
}
