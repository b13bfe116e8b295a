import { pino, type Logger } from 'pino';

export type { Logger };

/**
 * The process logger: JSON lines on stdout (or stderr for CLIs that print results on stdout).
 * Level from HAMSTRING_LOG_LEVEL, default info.
 */
export function createLogger(bindings: Record<string, unknown> = {}, destination: 1 | 2 = 1): Logger {
  const level = process.env.HAMSTRING_LOG_LEVEL ?? 'info';
  return pino(
    { level, base: { pid: process.pid, ...bindings } },
    pino.destination({ fd: destination, sync: false }),
  );
}

/** A logger that drops everything (unit tests). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
