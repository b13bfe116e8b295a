import type { LogField, PrefilterConfig } from '../../config/index.ts';
import type { LogLine } from '../messages.ts';

/** Whether a line stays in its batch. */
export type RelevanceCheck = (line: LogLine) => boolean;

/**
 * The prefilter's `relevance_method`. `check_dga_relevance` keeps a line only if, for every ListItem
 * field of the collector with a relevant list, the line's value is in that list (e.g. only
 * NXDOMAIN); `no_relevance_check` keeps every line.
 */
export function relevanceCheck(
  method: PrefilterConfig['relevance_method'],
  fields: readonly LogField[],
): RelevanceCheck {
  if (method === 'no_relevance_check') return () => true;
  const lists = fields.flatMap((field) =>
    field.type === 'ListItem' && field.relevant ? [[field.name, new Set(field.relevant)] as const] : [],
  );
  return (line) => lists.every(([name, relevant]) => relevant.has(line[name] as string));
}
