import { Writable } from 'node:stream';
import { pino, type LoggerOptions } from 'pino';

/** A pino logger (level info unless `options` says otherwise) whose lines land parsed in `lines`. */
export function captureLog(options: LoggerOptions = {}) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n'))
        if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { log: pino({ level: 'info', ...options }, sink), lines };
}
