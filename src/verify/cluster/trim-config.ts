import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml, stringify as toYaml } from 'yaml';

/** The configured component lists a name can be dropped from. */
const LISTS = ['log_filtering', 'data_inspection', 'data_analysis'] as const;

/**
 * A copy of `baseConfig` in `dir` without the prefilters, inspectors and detectors named in `drop`,
 * so that a pipeline repeated on every simulated machine stays within this host's two cores (the
 * shipped config's one chain, DGA, instead of two: 6 processes per machine instead of 9), and with
 * a 10 s transaction API timeout (why below). Returns its path; `baseConfig` itself when nothing is
 * dropped.
 */
export function trimmedConfig(baseConfig: string, dir: string, drop: readonly string[]): string {
  if (drop.length === 0) return baseConfig;
  const tree = parseYaml(readFileSync(baseConfig, 'utf8')) as {
    pipeline?: Record<string, unknown>;
    environment?: unknown;
  };
  const pipeline = tree.pipeline;
  if (pipeline === undefined) throw new Error(`${baseConfig} has no pipeline section`);
  for (const list of LISTS) {
    const entries = pipeline[list];
    if (Array.isArray(entries))
      pipeline[list] = entries.filter((e: { name?: unknown }) => !drop.includes(String(e.name)));
  }
  // A survivor whose commit was under way when the machine holding its transaction's coordinator
  // or partition leaders was cut off waits in that commit for the transaction API timeout (30 s
  // shipped) before a new producer finds the moved coordinator, and its group's rebalance waits
  // for it (a machine-loss run: the collector's partitions moved 28 s after the cut). Ten seconds
  // still outlives the broker's fencing (5 s) and a commit on this loaded host; an operator who
  // wants such moves fast sets the same.
  const environment = tree.environment as Record<string, Record<string, unknown> | undefined> | undefined;
  if (environment !== undefined)
    environment.kafka_producer = { ...environment.kafka_producer, transaction_api_timeout_seconds: 10 };
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'base-config.yaml');
  writeFileSync(path, toYaml(tree));
  return path;
}
