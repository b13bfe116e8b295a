import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { z } from 'zod';
import { findJava } from './executables.ts';
import { resolveDataDir } from './paths.ts';
import { AbortPoll, pollUntil } from './poll.ts';
import { assertPortsFree } from './ports.ts';
import { isProcessAlive, killAndWait, spawnDetached, tailFile, terminate } from './process-control.ts';
import { readStateFile, removeStateFile, writeStateFile } from './state-file.ts';

/** Debian's `zookeeper` package; its manifest names every jar the server needs. */
export const ZOOKEEPER_JAR = '/usr/share/java/zookeeper.jar';

export interface ZooKeeperOptions {
  dataDir: string;
  /** Client port, bound on 127.0.0.1 only. */
  port: number;
  /** Default 60 s. */
  readyTimeoutMs?: number;
}

const stateSchema = z.object({ pid: z.number().int(), port: z.number().int(), startedAt: z.string() });

function zooKeeperFiles(dataDir: string) {
  return {
    config: join(dataDir, 'zoo.cfg'),
    data: join(dataDir, 'data'),
    processLog: join(dataDir, 'process.log'),
    runningFile: join(dataDir, 'zookeeper-state.json'),
  };
}

/**
 * zoo.cfg of a standalone server for tests and the dev cluster: loopback only, no AdminServer (it
 * would claim port 8080), `ruok` allowed for the readiness check, short ticks so that a replica's
 * session (ClickHouse asks for 30 s) stays well inside the server's bounds.
 */
export function zooKeeperConfig(dataDir: string, port: number): string {
  return [
    'tickTime=500',
    `dataDir=${zooKeeperFiles(dataDir).data}`,
    `clientPort=${port}`,
    'clientPortAddress=127.0.0.1',
    'maxClientCnxns=0',
    'maxSessionTimeout=60000',
    'admin.enableServer=false',
    '4lw.commands.whitelist=ruok,srvr',
    // Keeps the data dir small over long dev runs.
    'autopurge.purgeInterval=1',
    '',
  ].join('\n');
}

/**
 * A standalone ZooKeeper (Debian's jar) run detached as a plain java process on its own port and
 * data dir, described by a state file so that another process can attach to it and stop it.
 */
export class LocalZooKeeper {
  private constructor(
    readonly dataDir: string,
    readonly port: number,
  ) {}

  /** `host:port` for ClickHouse's `<zookeeper><node>`. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Starts the server (or attaches to the one running in `dataDir`) and waits until it answers `ruok`. */
  static async start(opts: ZooKeeperOptions): Promise<LocalZooKeeper> {
    const dataDir = resolveDataDir(opts.dataDir);
    const files = zooKeeperFiles(dataDir);
    const running = readStateFile(files.runningFile, stateSchema);
    const zk = new LocalZooKeeper(dataDir, opts.port);
    if (running && isProcessAlive(running.pid, zk.marker())) {
      if (running.port !== opts.port)
        throw new Error(`ZooKeeper in ${dataDir} already runs on port ${running.port}; stop it first`);
      await zk.waitReady(opts.readyTimeoutMs ?? 60_000);
      return zk;
    }
    if (!existsSync(ZOOKEEPER_JAR))
      throw new Error(
        `${ZOOKEEPER_JAR} not found: install the Debian package zookeeper (see scripts/setup.sh)`,
      );
    await assertPortsFree([{ port: opts.port, purpose: 'ZooKeeper client port' }]);
    mkdirSync(files.data, { recursive: true });
    writeFileSync(files.config, zooKeeperConfig(dataDir, opts.port));
    const child = spawnDetached(
      findJava(),
      // C1 only and a small heap: the server lives minutes beside the code under test (see kafka-node-process.ts).
      [
        '-Xmx128m',
        '-XX:TieredStopAtLevel=1',
        '-cp',
        ZOOKEEPER_JAR,
        'org.apache.zookeeper.server.ZooKeeperServerMain',
        files.config,
      ],
      { cwd: dataDir, outputFile: files.processLog },
    );
    writeStateFile(files.runningFile, {
      pid: child.pid,
      port: opts.port,
      startedAt: new Date().toISOString(),
    });
    try {
      await zk.waitReady(opts.readyTimeoutMs ?? 60_000);
    } catch (e) {
      await zk.stop().catch(() => undefined);
      throw e;
    }
    return zk;
  }

  /** The server running from `dataDir` (per its state file), or undefined. */
  static attach(dataDir: string): LocalZooKeeper | undefined {
    const dir = resolveDataDir(dataDir);
    const state = readStateFile(zooKeeperFiles(dir).runningFile, stateSchema);
    if (!state) return undefined;
    const zk = new LocalZooKeeper(dir, state.port);
    return zk.isRunning() ? zk : undefined;
  }

  pid(): number | undefined {
    return readStateFile(zooKeeperFiles(this.dataDir).runningFile, stateSchema)?.pid;
  }

  isRunning(): boolean {
    const pid = this.pid();
    return pid !== undefined && isProcessAlive(pid, this.marker());
  }

  async waitReady(timeoutMs: number): Promise<void> {
    await pollUntil(
      async () => {
        if (!this.isRunning())
          throw new AbortPoll(new Error(`ZooKeeper in ${this.dataDir} exited${this.logTail()}`));
        return (await fourLetterWord(this.port, 'ruok')) === 'imok';
      },
      {
        timeoutMs,
        intervalMs: 200,
        onTimeout: () =>
          new Error(`ZooKeeper on port ${this.port} not ready after ${timeoutMs} ms${this.logTail()}`),
      },
    );
  }

  async kill(): Promise<void> {
    const pid = this.pid();
    if (pid !== undefined) await killAndWait(pid, this.marker());
  }

  /** SIGTERM (SIGKILL after 10 s); the data stays. */
  async stop(): Promise<void> {
    const pid = this.pid();
    if (pid !== undefined) await terminate(pid, this.marker(), 10_000);
    removeStateFile(zooKeeperFiles(this.dataDir).runningFile);
  }

  /** The config file's path on the command line tells our process from any other java. */
  private marker(): string {
    return zooKeeperFiles(this.dataDir).config;
  }

  private logTail(): string {
    const text = tailFile(zooKeeperFiles(this.dataDir).processLog, 12);
    return text ? `, last log lines:\n${text}` : '';
  }
}

/** Sends a four-letter command (`ruok`, `srvr`) and returns the answer, '' on any failure. */
function fourLetterWord(port: number, word: string, timeoutMs = 2000): Promise<string> {
  return new Promise((resolve) => {
    let answer = '';
    const socket = createConnection({ host: '127.0.0.1', port });
    const done = (): void => {
      socket.destroy();
      resolve(answer.trim());
    };
    socket.setTimeout(timeoutMs, done);
    socket.once('error', () => resolve(''));
    socket.once('connect', () => socket.write(word));
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    socket.once('end', done);
  });
}
