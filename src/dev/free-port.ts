import { createServer } from 'node:net';

/**
 * A TCP port free on 127.0.0.1 right now (bound, read and released), for a server one configures
 * with a port (a private resolver, a test's receiver).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
