/**
 * The consumer group and input topics of every stage process of a run, and how far a group is behind
 * them: what the soak samples as lag and what the environment's settle step waits on.
 */
import type { HamstringConfig } from '../../config/index.ts';
import type { AdminPort } from '../../kafka/admin.ts';
import { componentGroup, pipelineComponents } from '../../stages/index.ts';
import type { PipelineLayout } from './layout.ts';

/** The consumer group and input topics of every stage process, by its label (`collector dga_collector`). */
export function stageGroups(
  config: HamstringConfig,
  layout: PipelineLayout,
): Map<string, { group: string; topics: string[] }> {
  const paths = layout.collectors.flatMap((c) => c.paths);
  const inputs = (kind: string, name: string): string[] => {
    switch (kind) {
      case 'logserver':
        return [...layout.logserverInputs];
      case 'collector':
        return layout.collectors.filter((c) => c.name === name).map((c) => c.input);
      case 'prefilter':
        return paths.filter((p) => p.prefilter === name).map((p) => p.prefilterInput);
      case 'inspector':
        return paths.filter((p) => p.inspector === name).map((p) => p.inspectorInput);
      case 'detector':
        return paths.filter((p) => p.detector === name).map((p) => p.detectorInput);
      default:
        return paths.flatMap((p) => p.alerterInputs.filter((a) => a.alerter === name).map((a) => a.topic));
    }
  };
  const groups = new Map<string, { group: string; topics: string[] }>();
  for (const c of pipelineComponents(config)) {
    const group = componentGroup(config, c);
    if (group === undefined) continue;
    groups.set(c.name === c.kind ? c.kind : `${c.kind} ${c.name}`, {
      group,
      topics: [...new Set(inputs(c.kind, c.name))],
    });
  }
  return groups;
}

/**
 * Records behind a group on `topics`: per partition, the high watermark less the committed offset
 * less one, the commit marker that ends every transaction of the writer (a stage commits the offset
 * after the last record it read, never past the marker). Exact for committed transactions; one short
 * for a transaction still open.
 */
export async function groupLag(
  admin: AdminPort,
  group: string,
  topics: readonly string[],
  timeoutMs: number,
): Promise<number> {
  const committed = new Map(
    (await admin.groupOffsets(group, [...topics], timeoutMs)).map((o) => [
      `${o.topic}:${o.partition}`,
      o.offset,
    ]),
  );
  let lag = 0;
  for (const topic of topics)
    for (const w of await admin.watermarks(topic, timeoutMs)) {
      const at = committed.get(`${topic}:${w.partition}`) ?? -1;
      lag += Math.max(0, w.high - Math.max(at, w.low) - 1);
    }
  return lag;
}
