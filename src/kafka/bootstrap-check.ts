import { lookup } from 'node:dns/promises';
import { connect } from 'node:net';

/** Why one bootstrap address cannot be reached, in librdkafka's terms. */
export interface BootstrapProblem {
  /** `host:port` as configured. */
  address: string;
  /** `_RESOLVE`: the host name does not resolve; `_TRANSPORT`: no TCP connection (refused, timeout). */
  code: '_RESOLVE' | '_TRANSPORT';
  reason: string;
}

/** `host:port` entries of a bootstrap list; `[v6]:port` keeps its brackets off the host. */
export function bootstrapAddresses(list: string): { address: string; host: string; port: number }[] {
  return list
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a.length > 0)
    .map((address) => {
      const m = /^\[(.+)\]:(\d+)$/.exec(address) ?? /^([^:]+):(\d+)$/.exec(address);
      return m ? { address, host: m[1]!, port: Number(m[2]) } : { address, host: address, port: 9092 };
    });
}

const describeErrno = (e: NodeJS.ErrnoException): string =>
  ({
    ECONNREFUSED: 'connection refused (nothing listens on the port)',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    ECONNRESET: 'connection reset',
  })[e.code ?? ''] ?? `${e.code ?? 'error'}: ${e.message}`;

async function probe(
  host: string,
  port: number,
  timeoutMs: number,
): Promise<Omit<BootstrapProblem, 'address'> | undefined> {
  let ip: string;
  try {
    ip = (await lookup(host)).address;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    return { code: '_RESOLVE', reason: `host name ${host} does not resolve (${err.code ?? err.message})` };
  }
  return new Promise((resolve) => {
    const socket = connect({ host: ip, port });
    const done = (problem: Omit<BootstrapProblem, 'address'> | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(problem);
    };
    const timer = setTimeout(
      () => done({ code: '_TRANSPORT', reason: `no TCP connection to ${ip}:${port} within ${timeoutMs} ms` }),
      timeoutMs,
    );
    socket.once('connect', () => done(undefined));
    socket.once('error', (e: NodeJS.ErrnoException) =>
      done({ code: '_TRANSPORT', reason: `${ip}:${port}: ${describeErrno(e)}` }),
    );
  });
}

/**
 * Tries each bootstrap address once (name resolution, then a TCP connect bounded by `timeoutMs`) and
 * returns the ones that fail, each with its own cause. librdkafka reports an unresolvable name and a
 * closed port alike as "broker transport failure", without the address, and only after its first
 * retries; this check lets the runtime name the cause within a second of start. It is a diagnosis,
 * never a gate: the clients connect (and reconnect) on their own either way.
 */
export async function checkBootstrap(list: string, timeoutMs = 1_000): Promise<BootstrapProblem[]> {
  const results = await Promise.all(
    bootstrapAddresses(list).map(async (a) => {
      const problem = await probe(a.host, a.port, timeoutMs);
      return problem ? { address: a.address, ...problem } : undefined;
    }),
  );
  return results.filter((r): r is BootstrapProblem => r !== undefined);
}
