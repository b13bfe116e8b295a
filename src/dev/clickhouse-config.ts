import { join } from 'node:path';
import { z } from 'zod';

/** Debian's server configuration; every path and port in it is overridden on the command line. */
export const DEFAULT_CLICKHOUSE_CONFIG = '/etc/clickhouse-server/config.xml';

/** Ports one ClickHouse server listens on (127.0.0.1 and ::1, as Debian's config.xml says). */
export interface ClickHousePorts {
  httpPort: number;
  tcpPort: number;
  /**
   * Replication port: unused here, but the server always opens it; deriving it from the TCP port
   * (9000 -> 9009, Debian's default) lets two servers run side by side.
   */
  interserverPort: number;
}

export function clickHousePorts(httpPort = 8123, tcpPort = 9000): ClickHousePorts {
  for (const port of [httpPort, tcpPort, tcpPort + 9]) {
    if (!Number.isInteger(port) || port < 1024 || port > 65535) {
      throw new Error(`invalid ClickHouse port ${port}: use integers in 1024..65526`);
    }
  }
  if (httpPort === tcpPort || httpPort === tcpPort + 9)
    throw new Error('ClickHouse HTTP and TCP ports collide');
  return { httpPort, tcpPort, interserverPort: tcpPort + 9 };
}

/** Files of a ClickHouse data directory; the server's own data lives in `data/`. */
export function clickHouseFiles(dataDir: string) {
  const data = join(dataDir, 'data');
  return {
    dataDir,
    /** ClickHouse wants the trailing slash on its path settings. */
    path: `${data}/`,
    tmpPath: `${join(data, 'tmp')}/`,
    userFilesPath: `${join(data, 'user_files')}/`,
    formatSchemaPath: `${join(data, 'format_schemas')}/`,
    serverLog: join(dataDir, 'server.log'),
    errorLog: join(dataDir, 'server.err.log'),
    processLog: join(dataDir, 'process.log'),
    runningFile: join(dataDir, 'clickhouse-state.json'),
    layoutFile: join(dataDir, 'clickhouse-server.json'),
  };
}

/**
 * Arguments of `clickhouse-server`: the options after `--` override config.xml keys (ClickHouse
 * 18.16 accepts them for any key of the file). `--path=...` is also the marker that identifies
 * our process in /proc.
 */
export function clickHouseServerArgs(configFile: string, dataDir: string, ports: ClickHousePorts): string[] {
  const files = clickHouseFiles(dataDir);
  return [
    `--config-file=${configFile}`,
    '--',
    `--path=${files.path}`,
    `--tmp_path=${files.tmpPath}`,
    `--user_files_path=${files.userFilesPath}`,
    `--format_schema_path=${files.formatSchemaPath}`,
    `--logger.log=${files.serverLog}`,
    `--logger.errorlog=${files.errorLog}`,
    `--http_port=${ports.httpPort}`,
    `--tcp_port=${ports.tcpPort}`,
    `--interserver_http_port=${ports.interserverPort}`,
  ];
}

/** Login and TLS of a test server (see {@link clickHouseSecurityArgs}). */
export interface ClickHouseSecurity {
  /** A users.xml of its own (users with passwords) instead of Debian's passwordless `default`. */
  usersConfig?: string;
  /** An HTTPS listener with this PEM certificate and key (ClickHouse 18.16's build has OpenSSL). */
  https?: { port: number; certificateFile: string; privateKeyFile: string };
}

/** Config overrides for {@link ClickHouseSecurity}, appended to {@link clickHouseServerArgs}. */
export function clickHouseSecurityArgs(security: ClickHouseSecurity): string[] {
  const args: string[] = [];
  if (security.usersConfig !== undefined) args.push(`--users_config=${security.usersConfig}`);
  if (security.https) {
    args.push(
      `--https_port=${security.https.port}`,
      `--openSSL.server.certificateFile=${security.https.certificateFile}`,
      `--openSSL.server.privateKeyFile=${security.https.privateKeyFile}`,
      // Debian's config names a dhparam file it does not ship; empty means OpenSSL's built-in groups.
      '--openSSL.server.dhParamsFile=',
    );
  }
  return args;
}

/** State file of a running server: enough for another process to attach, kill or restart it. */
export const clickHouseRunningSchema = z.object({
  pid: z.number().int(),
  binary: z.string(),
  configFile: z.string(),
  httpPort: z.number().int(),
  tcpPort: z.number().int(),
  interserverPort: z.number().int(),
  /** {@link clickHouseSecurityArgs}, so a restart from another process keeps them. */
  extraArgs: z.array(z.string()).optional(),
  startedAt: z.string(),
});
export type ClickHouseRunningState = z.infer<typeof clickHouseRunningSchema>;

/** Ports a data dir was last started with; kept across stops so a restart reuses them. */
export const clickHouseLayoutSchema = z.object({ httpPort: z.number().int(), tcpPort: z.number().int() });

/**
 * One server's place in a replicated dev cluster (one shard, every server a replica of it): the
 * ZooKeeper it coordinates through, its `{shard}` and `{replica}` macros, and the cluster's replicas
 * for `<remote_servers>` (name `cluster`), so that `cluster('<name>', ...)` and Distributed tables
 * reach them all.
 */
export interface ClickHouseReplication {
  /** `host:port` of each ZooKeeper server. */
  zookeeper: readonly string[];
  shard: string;
  replica: string;
  cluster: string;
  /** Native TCP endpoints of every replica of the cluster, this one included. */
  replicas: readonly { host: string; tcpPort: number }[];
}

const xmlText = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/**
 * The `config.d` file that puts a server in its cluster. Debian's config.xml pulls `<zookeeper>` and
 * `<macros>` from /etc/metrika.xml, which a dev machine lacks; a file in `config.d/` beside the
 * config is merged into it instead. `users_config` is absolute because the config is a copy in
 * the data dir and Debian's names `users.xml` relative to its own directory.
 */
export function clickHouseReplicationXml(r: ClickHouseReplication, usersConfig: string): string {
  const nodes = r.zookeeper.map((address, i) => {
    const [host = '', port = ''] = address.split(/:(?=\d+$)/);
    return `    <node index="${i + 1}"><host>${xmlText(host)}</host><port>${xmlText(port)}</port></node>`;
  });
  const replicas = r.replicas.map(
    (x) => `        <replica><host>${xmlText(x.host)}</host><port>${x.tcpPort}</port></replica>`,
  );
  return [
    '<?xml version="1.0"?>',
    '<yandex>',
    `  <users_config>${xmlText(usersConfig)}</users_config>`,
    '  <zookeeper>',
    ...nodes,
    // A killed replica's session ends after this; the others see it as gone sooner.
    '    <session_timeout_ms>10000</session_timeout_ms>',
    '  </zookeeper>',
    `  <macros><shard>${xmlText(r.shard)}</shard><replica>${xmlText(r.replica)}</replica></macros>`,
    '  <remote_servers>',
    `    <${r.cluster}>`,
    '      <shard>',
    '        <internal_replication>true</internal_replication>',
    ...replicas,
    '      </shard>',
    `    </${r.cluster}>`,
    '  </remote_servers>',
    '</yandex>',
    '',
  ].join('\n');
}
