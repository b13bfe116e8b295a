import { connect } from 'node:net';

/** What a raw request got back: the status line's code (0 when none came) and the whole answer. */
export interface RawAnswer {
  status: number;
  text: string;
  /** Time from connecting until the server closed the socket. */
  closedAfterMs: number;
}

/**
 * Sends `request` byte for byte (no client-side URL normalisation, unlike fetch) and reads until the
 * server closes the socket or `timeoutMs` passes. `trickleMs`: send one byte per interval instead,
 * as a slowloris client does, stopping when the server closes.
 */
export function rawRequest(
  port: number,
  request: string,
  opts: { timeoutMs?: number; trickleMs?: number } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    const limit = setTimeout(() => {
      socket.destroy();
      reject(
        new Error(
          `no close within ${opts.timeoutMs ?? 10_000} ms; got ${JSON.stringify(text.slice(0, 200))}`,
        ),
      );
    }, opts.timeoutMs ?? 10_000);
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(limit);
      clearInterval(timer);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, text, closedAfterMs: Date.now() - started });
    });
    socket.on('connect', () => {
      if (opts.trickleMs === undefined) {
        socket.write(request);
        return;
      }
      let i = 0;
      timer = setInterval(() => {
        if (i < request.length && !socket.destroyed) socket.write(request[i++] ?? '');
      }, opts.trickleMs);
    });
  });
}

/** `GET path` with `Connection: close` and extra header lines. */
export function getRequest(path: string, headers: string[] = []): string {
  return [`GET ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...headers, '', ''].join('\r\n');
}
