import type { HamstringConfig } from '../config/index.ts';
import { ConfigError } from '../config/index.ts';
import { makeIssue } from '../config/errors.ts';

/** The environment variable that sets the base log level, final over `logging.base.debug`. */
export const LOG_LEVEL_ENV = 'HAMSTRING_LOG_LEVEL';

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LEVELS)[number];

/** The log levels of a process: its base level and the level of each stage by full name. */
export interface LogLevels {
  readonly base: LogLevel;
  stage(fullName: string): LogLevel;
}

/**
 * Resolves the log levels from config.yaml and the environment. Base: HAMSTRING_LOG_LEVEL when set,
 * else `debug` when `logging.base.debug`, else `info`. A stage whose `logging.modules.<full name>.debug`
 * is true logs at `debug` at least, so one stage can be debugged without the noise of the others.
 *
 * @throws {@link ConfigError} naming HAMSTRING_LOG_LEVEL and the accepted levels when it is malformed.
 */
export function logLevelsFromConfig(
  config: HamstringConfig,
  env: NodeJS.ProcessEnv = process.env,
): LogLevels {
  const text = env[LOG_LEVEL_ENV]?.trim();
  let base: LogLevel = config.logging.base.debug ? 'debug' : 'info';
  if (text !== undefined && text !== '') {
    const level = LEVELS.find((l) => l === text.toLowerCase());
    if (level === undefined)
      throw new ConfigError('env', [
        makeIssue({
          path: LOG_LEVEL_ENV,
          expected: `one of ${LEVELS.join(', ')}`,
          value: text,
          note: 'overrides logging.base.debug',
          origin: 'env',
        }),
      ]);
    base = level;
  }
  return {
    base,
    stage: (fullName) =>
      config.logging.modules[fullName]?.debug === true && LEVELS.indexOf(base) > LEVELS.indexOf('debug')
        ? 'debug'
        : base,
  };
}
