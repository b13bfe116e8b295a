import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** First executable called `name` in `preferred`, then PATH, then `fallbackDirs`; undefined if none. */
export function findExecutable(
  name: string,
  opts: { env?: NodeJS.ProcessEnv; preferred?: string[]; fallbackDirs?: string[] } = {},
): string | undefined {
  const env = opts.env ?? process.env;
  const candidates = [
    ...(opts.preferred ?? []),
    ...[...(env.PATH ?? '').split(delimiter).filter(Boolean), ...(opts.fallbackDirs ?? [])].map((dir) =>
      join(dir, name),
    ),
  ];
  return candidates.find((candidate) => {
    try {
      accessSync(candidate, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** `$JAVA_HOME/bin/java`, else `java` on PATH. */
export function findJava(env: NodeJS.ProcessEnv = process.env): string {
  const java = findExecutable('java', {
    env,
    preferred: env.JAVA_HOME ? [join(env.JAVA_HOME, 'bin', 'java')] : [],
  });
  if (!java) {
    throw new Error(
      'java not found: install Java 17 (openjdk-17-jdk-headless, see scripts/setup.sh) or set JAVA_HOME',
    );
  }
  return java;
}

/** Debian installs the server in /usr/bin (a link) and /usr/sbin; neither may be on a user's PATH. */
export function findClickHouseServer(env: NodeJS.ProcessEnv = process.env): string {
  const server = findExecutable('clickhouse-server', { env, fallbackDirs: ['/usr/bin', '/usr/sbin'] });
  if (!server) {
    throw new Error(
      'clickhouse-server not found: install the Debian package clickhouse-server (see scripts/setup.sh)',
    );
  }
  return server;
}
