import { createConnection, createServer } from 'node:net';

/** A local port and what it is for, used in "port in use" errors. */
export interface PortClaim {
  port: number;
  purpose: string;
}

/** True when nothing listens on `host:port` (we can bind it ourselves). */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** Throws a clear error naming the first port that is taken. */
export async function assertPortsFree(claims: readonly PortClaim[]): Promise<void> {
  for (const { port, purpose } of claims) {
    if (!(await isPortFree(port))) {
      throw new Error(
        `port ${port} in use (needed for ${purpose}); stop whatever listens there or pick another port`,
      );
    }
  }
}

/** True when a TCP connection to `host:port` succeeds within `timeoutMs`. */
export function canConnect(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
