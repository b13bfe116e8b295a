import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { findExecutable } from './executables.ts';

/**
 * A private Unbound (Debian's `unbound`, built with dnstap) for tests, benchmarks and the demo:
 * its own configuration in `dir`, no root (no chroot, no user switch, no daemon), serving only local
 * zones (nothing is asked of the internet), and streaming dnstap CLIENT_QUERY and CLIENT_RESPONSE
 * messages to a Unix socket or a TCP address. Unbound connects to the dnstap receiver itself and
 * reconnects with a back-off, so start the receiver first.
 */
export interface UnboundOptions {
  readonly dir: string;
  /** The UDP/TCP port it serves DNS on (127.0.0.1). */
  readonly port: number;
  readonly dnstap: { readonly unix: string } | { readonly tcp: UnboundDnstapTcp };
  /** dnstap identity (default "hamstring-unbound"). */
  readonly identity?: string;
  /** `local-zone` lines, e.g. `"test." static` (a static zone answers NXDOMAIN for names it lacks). */
  readonly localZones: readonly string[];
  /** `local-data` records, e.g. `www.test. 300 IN A 192.0.2.1`. */
  readonly localData: readonly string[];
  readonly threads?: number;
}

/** dnstap over TCP; with `tls`, over TLS presenting a client certificate (mutual TLS). */
export interface UnboundDnstapTcp {
  readonly host: string;
  readonly port: number;
  readonly tls?: {
    /** The name the receiver's certificate must carry. */
    readonly serverName: string;
    /** PEM bundle of the CA that signed the receiver's certificate. */
    readonly caFile: string;
    readonly certFile: string;
    readonly keyFile: string;
  };
}

export interface RunningUnbound {
  readonly port: number;
  readonly pid: number;
  readonly configPath: string;
  /** What it wrote to stderr (its log), for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

export function unboundConfig(o: UnboundOptions): string {
  // Unbound reads a value in single or double quotes, without escapes: TXT data keeps its own "".
  const quote = (s: string) => (s.includes('"') ? `'${s}'` : `"${s}"`);
  const dnstap =
    'unix' in o.dnstap
      ? [`dnstap-socket-path: ${quote(o.dnstap.unix)}`]
      : [`dnstap-ip: ${o.dnstap.tcp.host}@${o.dnstap.tcp.port}`, ...dnstapTls(o.dnstap.tcp.tls, quote)];
  return [
    'server:',
    '  username: ""',
    '  chroot: ""',
    `  directory: ${quote(o.dir)}`,
    `  pidfile: ${quote(join(o.dir, 'unbound.pid'))}`,
    '  use-syslog: no',
    '  logfile: ""',
    '  verbosity: 1',
    '  do-daemonize: no',
    `  num-threads: ${o.threads ?? 1}`,
    '  interface: 127.0.0.1',
    `  port: ${o.port}`,
    '  access-control: 127.0.0.0/8 allow',
    '  do-not-query-localhost: yes',
    '  module-config: "iterator"',
    '  trust-anchor-signaling: no',
    // dnsperf's sustained rate would otherwise hit the default per-client limits.
    '  ip-ratelimit: 0',
    '  ratelimit: 0',
    ...o.localZones.map((z) => `  local-zone: ${z}`),
    ...o.localData.map((d) => `  local-data: ${quote(d)}`),
    'remote-control:',
    '  control-enable: no',
    'dnstap:',
    '  dnstap-enable: yes',
    ...dnstap.map((l) => `  ${l}`),
    '  dnstap-send-identity: yes',
    `  dnstap-identity: ${quote(o.identity ?? 'hamstring-unbound')}`,
    '  dnstap-send-version: yes',
    '  dnstap-log-client-query-messages: yes',
    '  dnstap-log-client-response-messages: yes',
    '',
  ].join('\n');
}

function dnstapTls(tls: UnboundDnstapTcp['tls'], quote: (s: string) => string): string[] {
  if (tls === undefined) return ['dnstap-tls: no'];
  return [
    'dnstap-tls: yes',
    `dnstap-tls-server-name: ${quote(tls.serverName)}`,
    `dnstap-tls-cert-bundle: ${quote(tls.caFile)}`,
    `dnstap-tls-client-cert-file: ${quote(tls.certFile)}`,
    `dnstap-tls-client-key-file: ${quote(tls.keyFile)}`,
  ];
}

export async function startUnbound(o: UnboundOptions, timeoutMs = 15_000): Promise<RunningUnbound> {
  const unbound = findExecutable('unbound', { fallbackDirs: ['/usr/sbin'] });
  if (unbound === undefined)
    throw new Error("unbound not found: install Debian's unbound (scripts/setup.sh)");
  const configPath = join(o.dir, 'unbound.conf');
  writeFileSync(configPath, unboundConfig(o));
  const child = spawn(unbound, ['-d', '-c', configPath], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr?.on('data', (b: Buffer) => {
    output = (output + b.toString()).slice(-20_000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`unbound exited at start (${child.exitCode}):\n${output}`);
    if (await answers(o.port)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`unbound did not answer on 127.0.0.1:${o.port} within ${timeoutMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port: o.port, pid: child.pid ?? 0, configPath, output: () => output, stop };
}

/** The name the readiness probe asks (answered NXDOMAIN; it shows in the dnstap stream too). */
export const READINESS_PROBE_NAME = 'ready.invalid';

/** Whether a DNS server answers a query on 127.0.0.1:port (any response counts). */
function answers(port: number, timeoutMs = 500): Promise<boolean> {
  const socket = createSocket('udp4');
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      socket.close();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.once('message', () => done(true));
    socket.once('error', () => done(false));
    const query = dnsPacket.encode({
      type: 'query',
      id: 1,
      questions: [{ type: 'A', name: READINESS_PROBE_NAME }],
    });
    socket.send(query, port, '127.0.0.1');
  });
}
