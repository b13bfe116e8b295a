import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createClient } from '@clickhouse/client';
import {
  DEFAULT_CLICKHOUSE_CONFIG,
  clickHouseFiles,
  clickHouseLayoutSchema,
  clickHousePorts,
  clickHouseRunningSchema,
  clickHouseReplicationXml,
  clickHouseSecurityArgs,
  clickHouseServerArgs,
  type ClickHousePorts,
  type ClickHouseReplication,
  type ClickHouseSecurity,
  type ClickHouseRunningState,
} from './clickhouse-config.ts';
import { findClickHouseServer } from './executables.ts';
import { resolveDataDir } from './paths.ts';
import { AbortPoll, pollUntil } from './poll.ts';
import { assertPortsFree } from './ports.ts';
import {
  isProcessAlive,
  killAndWait,
  spawnDetached,
  tailFile,
  terminate,
  type DetachedProcess,
} from './process-control.ts';
import { readStateFile, removeStateFile, writeStateFile } from './state-file.ts';

/** Options of {@link LocalClickHouse.start}. */
export interface ClickHouseOptions {
  dataDir: string;
  /** Default: the port this data dir last used, else 8123. */
  httpPort?: number;
  /** Default: the port this data dir last used, else 9000. The interserver port is tcpPort + 9. */
  tcpPort?: number;
  /** Default /etc/clickhouse-server/config.xml (Debian's). */
  configFile?: string;
  /** Default 60 s. */
  readyTimeoutMs?: number;
  /**
   * Users with passwords and an HTTPS port. The users file must keep a passwordless `default` user
   * on loopback: the readiness check logs in as it.
   */
  security?: ClickHouseSecurity;
  /**
   * A replica of a replicated cluster: the server runs on a copy of the config with a `config.d`
   * file naming its ZooKeeper, macros and cluster, and tells the other replicas to fetch parts
   * from 127.0.0.1 (its interserver port, tcpPort + 9).
   */
  replication?: ClickHouseReplication;
}

const DEFAULT_READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 30_000;

/**
 * A local ClickHouse server (Debian's 18.16) run detached from a data directory, described by a
 * state file (`clickhouse-state.json`) so other processes can attach, kill and restart it.
 */
export class LocalClickHouse {
  readonly dataDir: string;
  readonly httpPort: number;
  readonly tcpPort: number;
  /** HTTP endpoint for @clickhouse/client, e.g. http://127.0.0.1:8123. */
  readonly url: string;
  /** True when {@link start} found the server already running and attached to it. */
  readonly wasAlreadyRunning: boolean;
  private readonly ports: ClickHousePorts;
  private readonly binary: string;
  private readonly configFile: string;
  private readonly extraArgs: readonly string[];
  private child: DetachedProcess | undefined;

  private constructor(
    dataDir: string,
    state: Omit<ClickHouseRunningState, 'pid' | 'startedAt'>,
    attached: boolean,
  ) {
    this.dataDir = dataDir;
    this.ports = clickHousePorts(state.httpPort, state.tcpPort);
    this.httpPort = state.httpPort;
    this.tcpPort = state.tcpPort;
    this.url = `http://127.0.0.1:${state.httpPort}`;
    this.binary = state.binary;
    this.configFile = state.configFile;
    this.extraArgs = state.extraArgs ?? [];
    this.wasAlreadyRunning = attached;
  }

  /**
   * Starts the server on `dataDir`, or attaches to the one already running there, and waits
   * until it answers `/ping` and `SELECT 1`. A failed start stops the process and rejects with
   * the reason (port in use, or the server's last error log lines).
   */
  static async start(opts: ClickHouseOptions): Promise<LocalClickHouse> {
    const dataDir = resolveDataDir(opts.dataDir);
    const readyTimeoutMs = opts.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
    const running = LocalClickHouse.attach(dataDir);
    if (running) {
      const wanted = clickHousePorts(opts.httpPort ?? running.httpPort, opts.tcpPort ?? running.tcpPort);
      if (wanted.httpPort !== running.httpPort || wanted.tcpPort !== running.tcpPort) {
        throw new Error(
          `ClickHouse in ${dataDir} already runs on HTTP ${running.httpPort} / TCP ${running.tcpPort}; stop it first`,
        );
      }
      await running.waitReady(readyTimeoutMs);
      return running;
    }
    const baseConfig = opts.configFile ?? DEFAULT_CLICKHOUSE_CONFIG;
    if (!existsSync(baseConfig))
      throw new Error(`ClickHouse config ${baseConfig} not found (see scripts/setup.sh)`);
    const configFile = opts.replication ? replicaConfig(dataDir, baseConfig, opts.replication) : baseConfig;
    const files = clickHouseFiles(dataDir);
    const previous = readStateFile(files.layoutFile, clickHouseLayoutSchema);
    const ports = clickHousePorts(opts.httpPort ?? previous?.httpPort, opts.tcpPort ?? previous?.tcpPort);
    mkdirSync(dataDir, { recursive: true });
    writeStateFile(files.layoutFile, { httpPort: ports.httpPort, tcpPort: ports.tcpPort });
    const server = new LocalClickHouse(
      dataDir,
      {
        binary: findClickHouseServer(),
        configFile,
        ...ports,
        extraArgs: [
          ...(opts.security ? clickHouseSecurityArgs(opts.security) : []),
          // Replicas register this host in ZooKeeper for part fetches; the machine's name may not resolve to loopback.
          ...(opts.replication ? ['--interserver_http_host=127.0.0.1'] : []),
        ],
      },
      false,
    );
    await server.launch(readyTimeoutMs);
    return server;
  }

  /** The server described by the state file in `dataDir`, or undefined when it is not running. */
  static attach(dataDir: string): LocalClickHouse | undefined {
    const dir = resolveDataDir(dataDir);
    const state = readStateFile(clickHouseFiles(dir).runningFile, clickHouseRunningSchema);
    if (!state || !isProcessAlive(state.pid, clickHouseFiles(dir).path)) return undefined;
    return new LocalClickHouse(dir, state, true);
  }

  /** The server's pid from the state file, whether or not it is still alive. */
  pid(): number | undefined {
    return this.readState()?.pid;
  }

  isRunning(): boolean {
    const pid = this.pid();
    return pid !== undefined && isProcessAlive(pid, this.marker());
  }

  /** Resolves when `/ping` answers and `SELECT 1` works through @clickhouse/client. */
  async waitReady(timeoutMs = DEFAULT_READY_TIMEOUT_MS): Promise<void> {
    await pollUntil(
      async () => {
        if (!this.isRunning()) throw new AbortPoll(this.exitedError());
        return clickHouseAnswers(this.url);
      },
      {
        timeoutMs,
        intervalMs: 200,
        onTimeout: (error) =>
          new Error(
            `ClickHouse at ${this.url} not ready after ${timeoutMs} ms` +
              (error instanceof Error ? ` (${error.message})` : '') +
              this.logTail(),
          ),
      },
    );
  }

  /** kill -9 and wait until the process is gone; the state file stays, so {@link restart} works. */
  async kill(): Promise<void> {
    const pid = this.pid();
    if (pid !== undefined) await killAndWait(pid, this.marker());
  }

  /** SIGTERM (SIGKILL after 30 s), state file removed; the data stays. */
  async stop(): Promise<void> {
    const pid = this.pid();
    if (pid !== undefined) await terminate(pid, this.marker(), STOP_GRACE_MS);
    removeStateFile(clickHouseFiles(this.dataDir).runningFile);
  }

  /** Stops the server if it runs (gracefully), starts it again on the same ports and data, waits until ready. */
  async restart(timeoutMs = DEFAULT_READY_TIMEOUT_MS): Promise<void> {
    if (this.isRunning()) await this.stop();
    await this.launch(timeoutMs);
  }

  private async launch(readyTimeoutMs: number): Promise<void> {
    const files = clickHouseFiles(this.dataDir);
    await assertPortsFree([
      { port: this.ports.httpPort, purpose: 'ClickHouse HTTP' },
      { port: this.ports.tcpPort, purpose: 'ClickHouse native TCP' },
      { port: this.ports.interserverPort, purpose: 'ClickHouse interserver HTTP (tcp port + 9)' },
    ]);
    mkdirSync(files.tmpPath, { recursive: true });
    const args = [...clickHouseServerArgs(this.configFile, this.dataDir, this.ports), ...this.extraArgs];
    this.child = spawnDetached(this.binary, args, { cwd: this.dataDir, outputFile: files.processLog });
    const state: ClickHouseRunningState = {
      pid: this.child.pid,
      binary: this.binary,
      configFile: this.configFile,
      ...this.ports,
      ...(this.extraArgs.length > 0 ? { extraArgs: [...this.extraArgs] } : {}),
      startedAt: new Date().toISOString(),
    };
    writeStateFile(files.runningFile, state);
    try {
      await this.waitReady(readyTimeoutMs);
    } catch (error) {
      await this.stop().catch(() => undefined);
      throw error;
    }
  }

  private exitedError(): Error {
    const status = this.child?.exitStatus();
    const how = status ? ` (${status.signal ? `signal ${status.signal}` : `exit code ${status.code}`})` : '';
    return new Error(`ClickHouse in ${this.dataDir} exited${how}${this.logTail()}`);
  }

  private logTail(): string {
    const files = clickHouseFiles(this.dataDir);
    const parts = [files.processLog, files.errorLog]
      .map((file) => [file, tailFile(file, 12)] as const)
      .filter(([, text]) => text)
      .map(([file, text]) => `--- ${file}\n${text}`);
    return parts.length > 0 ? `, last log lines:\n${parts.join('\n')}` : '';
  }

  private marker(): string {
    return `--path=${clickHouseFiles(this.dataDir).path}`;
  }

  private readState(): ClickHouseRunningState | undefined {
    return readStateFile(clickHouseFiles(this.dataDir).runningFile, clickHouseRunningSchema);
  }
}

/** Writes `<dataDir>/config/config.xml` (a copy of `baseConfig`) and its `config.d` replication file; returns the copy's path. */
function replicaConfig(dataDir: string, baseConfig: string, replication: ClickHouseReplication): string {
  const dir = join(dataDir, 'config');
  mkdirSync(join(dir, 'config.d'), { recursive: true });
  const configFile = join(dir, 'config.xml');
  copyFileSync(baseConfig, configFile);
  writeFileSync(
    join(dir, 'config.d', 'hamstring-replication.xml'),
    clickHouseReplicationXml(replication, join(dirname(baseConfig), 'users.xml')),
  );
  return configFile;
}

/** One readiness check: the HTTP ping, then a real query through the client the project uses. */
async function clickHouseAnswers(url: string): Promise<boolean> {
  const ping = await fetch(`${url}/ping`, { signal: AbortSignal.timeout(2000) });
  if (!ping.ok) return false;
  const client = createClient({ url, request_timeout: 5000 });
  try {
    const result = await client.query({ query: 'SELECT 1 AS one', format: 'JSONEachRow' });
    const rows = await result.json<{ one: number }>();
    return rows[0]?.one === 1;
  } finally {
    await client.close();
  }
}
