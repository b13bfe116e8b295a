import { pino, type Logger, type LoggerOptions } from 'pino';
import { hasSecrets, REDACTED, scrubSecrets } from '../errors/secrets.ts';
import { RepeatFilter, repeatKey } from './repeat-filter.ts';

export type { Logger };

/** pino's numeric level of `warn`: lines at or above it are rate-limited when repeated. */
const WARN = 40;

/** Identical warnings and errors are written at most once per this interval (default 10 s). */
function repeatIntervalMs(env: NodeJS.ProcessEnv): number {
  const v = Number(env.HAMSTRING_LOG_REPEAT_INTERVAL_MS);
  return Number.isFinite(v) && v >= 0 ? v : 10_000;
}

/**
 * pino hooks that rate-limit repeated identical warnings and errors (see RepeatFilter): a failing
 * loop writes one line per interval with `repeated` (lines suppressed) and `repeatedForMs`, so it
 * cannot fill a disk. Debug and info lines pass unchanged; `intervalMs` 0 turns the filter off.
 */
export function repeatLimitHooks(
  intervalMs: number,
  now: () => number = Date.now,
): NonNullable<LoggerOptions['hooks']> {
  const filter = new RepeatFilter({ intervalMs, maxKeys: 1_000, now });
  return {
    logMethod(args, method, level) {
      if (level < WARN || intervalMs === 0) return method.apply(this, args);
      const [obj, msg] = args as unknown[];
      const decision = filter.decide(repeatKey(level, this.bindings(), obj, msg));
      if (!decision.emit) return;
      if (decision.suppressed === 0) return method.apply(this, args);
      const extra = { repeated: decision.suppressed, repeatedForMs: decision.sinceMs };
      if (typeof obj === 'object' && obj !== null && !(obj instanceof Error)) {
        return method.apply(this, [{ ...obj, ...extra }, ...args.slice(1)] as Parameters<typeof method>);
      }
      return method.apply(this, [extra, ...args] as Parameters<typeof method>);
    },
  };
}

/**
 * Fields that hold a secret wherever a log call passes a config object or a request: their values are
 * replaced by pino before serialisation. Secrets inside free text (an error message echoing a
 * client's configuration) are caught after serialisation by {@link secretHooks}.
 */
export const REDACT_PATHS: readonly string[] = [
  'password',
  'token',
  'authorization',
  'access_token',
  'sasl.password',
  'ssl.key.password',
  '*.password',
  '*.token',
  '*.authorization',
  '*.access_token',
  '*.sasl.password',
  '*.ssl.key.password',
  '*.*.password',
  '*.*.token',
  "*['sasl.password']",
  "*['ssl.key.password']",
  "['sasl.password']",
  "['ssl.key.password']",
  'headers.authorization',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
];

/** pino's redaction of {@link REDACT_PATHS}. */
export const redactOptions: NonNullable<LoggerOptions['redact']> = {
  paths: [...REDACT_PATHS],
  censor: REDACTED,
};

/** Replaces every registered secret (src/errors/secrets.ts) in each serialised line. */
export function scrubLine(line: string): string {
  return hasSecrets() || line.includes('://') ? scrubSecrets(line) : line;
}

/** What every pino logger of the project sets so that no secret reaches its output. */
export function secretSafeOptions(): Pick<LoggerOptions, 'redact' | 'hooks'> {
  return { redact: redactOptions, hooks: { streamWrite: scrubLine } };
}

/**
 * The process logger: JSON lines on stdout (or stderr for CLIs that print results on stdout).
 * Level: `level` when given (the application layer resolves it from config.yaml), else
 * HAMSTRING_LOG_LEVEL, default info. Repeated warnings are rate-limited (HAMSTRING_LOG_REPEAT_INTERVAL_MS).
 * Secrets never reach the output: config-shaped fields are redacted, registered secrets scrubbed.
 */
export function createLogger(
  bindings: Record<string, unknown> = {},
  destination: 1 | 2 = 1,
  level: string = process.env.HAMSTRING_LOG_LEVEL ?? 'info',
): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid, ...bindings },
      redact: redactOptions,
      hooks: { ...repeatLimitHooks(repeatIntervalMs(process.env)), streamWrite: scrubLine },
    },
    pino.destination({ fd: destination, sync: false }),
  );
}

/** A logger that drops everything (unit tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
