import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * The process logger: JSON lines on stdout (or stderr for CLIs that print results on stdout).
 * Level: `level` when given (the application layer resolves it from config.yaml), else
 * HAMSTRING_LOG_LEVEL, default info.
 */
export function createLogger(
  bindings: Record<string, unknown> = {},
  destination: 1 | 2 = 1,
  level: string = process.env.HAMSTRING_LOG_LEVEL ?? 'info',
): Logger {
  return pino(
    { level, base: { pid: process.pid, ...bindings } },
    pino.destination({ fd: destination, sync: false }),
  );
}

/** A logger that drops everything (unit tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
