import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from './paths.ts';

/** The Kafka broker the project runs: version from `dev/kafka.env` and where its jars are cached. */
export interface KafkaDistribution {
  version: string;
  libsDir: string;
}

/** Parses the `KEY=value` lines of `dev/kafka.env` (the file scripts/setup.sh sources). */
export function parseEnvFile(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const match = /^\s*([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (match) values[match[1]!] = match[2]!.trim().replace(/^(['"])(.*)\1$/, '$2');
  }
  return values;
}

/** Reads KAFKA_VERSION from `dev/kafka.env`, the single place that names it. */
export function kafkaVersion(root: string = projectRoot): string {
  const version = parseEnvFile(readFileSync(join(root, 'dev', 'kafka.env'), 'utf8')).KAFKA_VERSION;
  if (!version) throw new Error(`KAFKA_VERSION missing in ${join(root, 'dev', 'kafka.env')}`);
  return version;
}

/** Same cache location as scripts/setup.sh: `${HAMSTRING_CACHE_DIR:-$HOME/.cache/hamstring}/kafka-<v>/libs`. */
export function kafkaLibsDir(version: string, env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.HAMSTRING_CACHE_DIR || join(homedir(), '.cache', 'hamstring');
  return join(cache, `kafka-${version}`, 'libs');
}

/** The distribution, or a clear error when setup has not resolved the jars yet. */
export function requireKafkaDistribution(env: NodeJS.ProcessEnv = process.env): KafkaDistribution {
  const version = kafkaVersion();
  const libsDir = kafkaLibsDir(version, env);
  // setup.sh touches .complete only after Maven copied every jar.
  if (!existsSync(join(libsDir, '.complete'))) {
    throw new Error(`Kafka ${version} jars missing in ${libsDir}: run scripts/setup.sh`);
  }
  return { version, libsDir };
}
