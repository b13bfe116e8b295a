import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml, stringify as toYaml } from 'yaml';

/** The configured component lists a name can be dropped from. */
const LISTS = ['log_filtering', 'data_inspection', 'data_analysis'] as const;

/**
 * A copy of `baseConfig` in `dir` without the prefilters, inspectors and detectors named in `drop`,
 * so that a pipeline repeated on every simulated machine stays within this host's two cores (the
 * shipped config's one chain, DGA, instead of two: 6 processes per machine instead of 9). Returns
 * its path; `baseConfig` itself when nothing is dropped.
 */
export function trimmedConfig(baseConfig: string, dir: string, drop: readonly string[]): string {
  if (drop.length === 0) return baseConfig;
  const tree = parseYaml(readFileSync(baseConfig, 'utf8')) as { pipeline?: Record<string, unknown> };
  const pipeline = tree.pipeline;
  if (pipeline === undefined) throw new Error(`${baseConfig} has no pipeline section`);
  for (const list of LISTS) {
    const entries = pipeline[list];
    if (Array.isArray(entries))
      pipeline[list] = entries.filter((e: { name?: unknown }) => !drop.includes(String(e.name)));
  }
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'base-config.yaml');
  writeFileSync(path, toYaml(tree));
  return path;
}
