import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, isIPv6, type Socket } from 'node:net';
import { HamstringError } from '../../errors/hamstring-error.ts';
import { octetCounted } from './syslog-message.ts';

/** Sending to the syslog receiver failed in a way a later attempt may not: retried with back-off. */
export class SyslogUnavailableError extends HamstringError {
  override readonly name = 'SyslogUnavailableError';
  readonly code = 'SYSLOG_UNAVAILABLE';
}

/**
 * Sends syslog messages in order. `send` resolves once every message left without an error being
 * reported, and rejects with {@link SyslogUnavailableError} when any of them may not have arrived:
 * the caller then sends them all again (receivers drop repeats by the alert id).
 */
export interface SyslogTransport {
  send(messages: readonly string[], signal: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

/**
 * UDP (RFC 5426), one datagram per message, on a connected socket: a receiver that is down answers
 * with ICMP "port unreachable", which the kernel reports on that socket as ECONNREFUSED shortly after
 * the send. So after a batch the transport waits `errorWaitMs` for such a report before it counts the
 * batch sent. A datagram lost on the way, or whose ICMP answer is filtered, goes unnoticed: UDP has no
 * acknowledgement (use TCP for that).
 */
export function udpTransport(o: { host: string; port: number; errorWaitMs: number }): SyslogTransport {
  let socket: UdpSocket | undefined;
  let errors: Error[] = [];
  const open = async (): Promise<UdpSocket> => {
    if (socket) return socket;
    const s = createSocket(isIPv6(o.host) ? 'udp6' : 'udp4');
    s.on('error', (e) => errors.push(e));
    s.unref();
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.connect(o.port, o.host, () => {
        s.off('error', reject);
        resolve();
      });
    }).catch((e: unknown) => {
      s.close();
      throw e;
    });
    socket = s;
    return s;
  };
  const drop = () => {
    socket?.close();
    socket = undefined;
  };
  return {
    async send(messages) {
      errors = [];
      try {
        const s = await open();
        for (const message of messages)
          await new Promise<void>((resolve, reject) => s.send(message, (e) => (e ? reject(e) : resolve())));
        if (o.errorWaitMs > 0) await new Promise((r) => setTimeout(r, o.errorWaitMs));
      } catch (e) {
        errors.push(e instanceof Error ? e : new Error(String(e)));
      }
      const [first] = errors;
      if (first) {
        drop();
        throw new SyslogUnavailableError(`syslog udp://${o.host}:${o.port}: ${first.message}`, {
          cause: first,
        });
      }
    },
    async close() {
      drop();
      return Promise.resolve();
    },
  };
}

/**
 * TCP with octet-counting framing (RFC 6587), one connection kept open. A batch counts sent when its
 * last frame was handed to the kernel and the connection reported neither an error nor its end
 * meanwhile; otherwise the connection is dropped and the whole batch fails (sent again after the
 * back-off, on a new connection). The limit: bytes the receiver's kernel acknowledged but the
 * receiver never processed (it crashed) are lost; syslog over TCP has no application acknowledgement.
 */
export function tcpTransport(o: { host: string; port: number; timeoutMs: number }): SyslogTransport {
  // One connection and what happened to it; events of a dropped connection change nothing.
  let current: { socket: Socket; broken?: Error } | undefined;
  const drop = () => {
    current?.socket.destroy();
    current = undefined;
  };
  const open = async (signal: AbortSignal): Promise<{ socket: Socket; broken?: Error }> => {
    if (current && !current.broken) return current;
    drop();
    const s = connect({ host: o.host, port: o.port });
    const connection: { socket: Socket; broken?: Error } = { socket: s };
    s.setNoDelay(true);
    s.on('error', (e) => (connection.broken ??= e));
    s.on('end', () => (connection.broken ??= new Error('the receiver closed the connection')));
    s.on('close', () => (connection.broken ??= new Error('connection closed')));
    s.on('data', () => undefined); // a syslog receiver sends nothing; read so that 'end' is seen
    // Not connect's own `signal`: that would tie the kept connection to this one batch.
    const abort = () => s.destroy(new Error(`not connected within ${o.timeoutMs} ms`));
    signal.addEventListener('abort', abort, { once: true });
    try {
      await new Promise<void>((resolve, reject) => {
        s.once('connect', resolve);
        s.once('error', reject);
      });
    } catch (e) {
      s.destroy();
      throw e;
    } finally {
      signal.removeEventListener('abort', abort);
    }
    s.unref();
    current = connection;
    return connection;
  };
  return {
    async send(messages, signal) {
      const timeout = AbortSignal.timeout(o.timeoutMs);
      const both = AbortSignal.any([signal, timeout]);
      try {
        const connection = await open(both);
        const s = connection.socket;
        const written = messages.map(
          (message) =>
            new Promise<void>((resolve, reject) =>
              s.write(octetCounted(message), (e) => (e ? reject(e) : resolve())),
            ),
        );
        await Promise.race([
          Promise.all(written),
          new Promise((_, reject) =>
            both.addEventListener('abort', () => reject(new Error(`no progress within ${o.timeoutMs} ms`)), {
              once: true,
            }),
          ),
        ]);
        // An error or end that arrived with the writes is delivered on the next turn of the loop.
        await new Promise((r) => setImmediate(r));
        if (connection.broken) throw connection.broken;
      } catch (e) {
        drop();
        const reason = e instanceof Error ? e.message : String(e);
        throw new SyslogUnavailableError(`syslog tcp://${o.host}:${o.port}: ${reason}`, { cause: e });
      }
    },
    async close() {
      const s = current?.socket;
      current = undefined;
      if (!s) return;
      await new Promise<void>((resolve) => s.end(resolve));
      s.destroy();
    },
  };
}
