import type { LogField, PrefilterConfig } from '../../config/index.ts';
import { windowDomain } from '../detector/domainator/grouping.ts';
import type { LogLine } from '../messages.ts';

/** Whether a line stays in its batch. */
export type RelevanceCheck = (line: LogLine) => boolean;

/**
 * The prefilter's `relevance_method`. `check_dga_relevance` keeps a line only if, for every ListItem
 * field of the collector with a relevant list, the line's value is in that list (e.g. only
 * NXDOMAIN). `check_tunnel_relevance` keeps a line whose name the Domainator keeps a window for
 * (`windowDomain`, before the detector's own `search_domains`, which it still drops): about half
 * the names of the generated traffic have no subdomain or sit in a lookup or provider zone, and
 * each would otherwise cost the tunnel chain's inspector and detector a record hop and a decode.
 * `no_relevance_check` keeps every line.
 */
export function relevanceCheck(
  method: PrefilterConfig['relevance_method'],
  fields: readonly LogField[],
): RelevanceCheck {
  if (method === 'no_relevance_check') return () => true;
  if (method === 'check_tunnel_relevance')
    return (line) => typeof line.domain_name === 'string' && windowDomain(line.domain_name) !== undefined;
  const lists = fields.flatMap((field) =>
    field.type === 'ListItem' && field.relevant ? [[field.name, new Set(field.relevant)] as const] : [],
  );
  return (line) => lists.every(([name, relevant]) => relevant.has(line[name] as string));
}
