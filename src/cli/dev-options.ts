import { defaultVarDir, resolveDataDir } from '../dev/paths.ts';
import type { OptionSpecs } from './command.ts';
import { stringOption } from './options.ts';

/** Default data dirs of the local services, under the repository's var/ (ignored by git). */
export const DEFAULT_KAFKA_DIR = defaultVarDir('kafka');
export const DEFAULT_CLICKHOUSE_DIR = defaultVarDir('clickhouse');

export const dataDirOption: OptionSpecs = { 'data-dir': { type: 'string', short: 'd' } };

/** `--data-dir` resolved against the current directory, else the default. */
export function dataDirFrom(values: Record<string, string | boolean | undefined>, fallback: string): string {
  const dir = stringOption(values, 'data-dir');
  return dir === undefined ? fallback : resolveDataDir(dir);
}
