import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Debian's rsyslogd, run as this user with its own config: imudp/imtcp on 127.0.0.1, omfile to files. */
export interface Rsyslog {
  readonly dir: string;
  /** Each received message as it arrived (`%rawmsg%`: the TCP frame's length prefix removed). */
  raw(): string[];
  /**
   * rsyslog's own RFC 5424 reading of each message:
   * `pri|timereported|hostname|app-name|procid|msgid|structured-data|protocol-version|msg`.
   */
  parsed(): string[];
  stop(): Promise<void>;
}

const lines = (path: string) =>
  existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];

/** Is `port` bound on 127.0.0.1 (TCP: listening)? Read from /proc, so nothing is sent to it. */
function bound(protocol: 'tcp' | 'udp', port: number): boolean {
  const hex = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync(`/proc/net/${protocol}`, 'utf8')
    .split('\n')
    .some((l) => {
      const fields = l.trim().split(/\s+/);
      return fields[1] === hex && (protocol === 'udp' || fields[3] === '0A');
    });
}

export async function startRsyslog(o: { udpPort: number; tcpPort: number }): Promise<Rsyslog> {
  const dir = mkdtempSync(join(tmpdir(), 'hamstring-rsyslog-'));
  const conf = join(dir, 'rsyslog.conf');
  writeFileSync(
    conf,
    `global(workDirectory="${dir}" maxMessageSize="64k")
module(load="imudp")
module(load="imtcp")
input(type="imudp" port="${o.udpPort}" address="127.0.0.1")
input(type="imtcp" port="${o.tcpPort}" address="127.0.0.1")
template(name="raw" type="string" string="%rawmsg%\\n")
template(name="parsed" type="string"
  string="%pri%|%timereported:::date-rfc3339%|%hostname%|%app-name%|%procid%|%msgid%|%structured-data%|%protocol-version%|%msg%\\n")
action(type="omfile" file="${join(dir, 'raw.log')}" template="raw")
action(type="omfile" file="${join(dir, 'parsed.log')}" template="parsed")
`,
  );
  const child: ChildProcess = spawn('rsyslogd', ['-n', '-f', conf, '-i', join(dir, 'rsyslogd.pid')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 20_000;
  while (!(bound('tcp', o.tcpPort) && bound('udp', o.udpPort))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`rsyslogd did not bind ${o.udpPort}/udp and ${o.tcpPort}/tcp: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    dir,
    raw: () => lines(join(dir, 'raw.log')),
    parsed: () => lines(join(dir, 'parsed.log')),
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
