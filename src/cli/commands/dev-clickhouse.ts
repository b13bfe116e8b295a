import { LocalClickHouse } from '../../dev/clickhouse-server.ts';
import type { Command } from '../command.ts';
import { DEFAULT_CLICKHOUSE_DIR, dataDirFrom, dataDirOption } from '../dev-options.ts';
import { seconds, showPath } from '../format.ts';
import { intOption } from '../options.ts';
import { clickHouseStatusLine } from '../status-lines.ts';

export type ClickHouseAction = 'start' | 'status' | 'stop' | 'kill';

/** Exit code of `status` when the server does not run. */
const NOT_RUNNING = 3;

export function clickHouseCommand(action: ClickHouseAction): Command {
  if (action === 'start') return startCommand;
  return {
    usage: '[--data-dir D]',
    ...(action === 'status' ? { help: `Exit code ${NOT_RUNNING} when the server does not run.` } : {}),
    options: dataDirOption,
    async run({ values, io }) {
      const dataDir = dataDirFrom(values, DEFAULT_CLICKHOUSE_DIR);
      const server = LocalClickHouse.attach(dataDir);
      if (!server) {
        io.out(`clickhouse not running (data ${showPath(dataDir)})`);
        return action === 'status' ? NOT_RUNNING : undefined;
      }
      if (action === 'status') {
        io.out(clickHouseStatusLine(server));
        return;
      }
      const started = Date.now();
      await (action === 'kill' ? server.kill() : server.stop());
      io.out(
        `clickhouse ${action === 'kill' ? 'killed (SIGKILL)' : 'stopped'} (${seconds(Date.now() - started)})`,
      );
    },
  };
}

const startCommand: Command = {
  usage: '[--data-dir D] [--http-port P] [--tcp-port P]',
  help: [
    '--data-dir   default var/clickhouse',
    '--http-port  default 8123 (or the port the data dir used last)',
    '--tcp-port   default 9000 (or the port the data dir used last); tcp+9 is the interserver port',
    'Idempotent: attaches to the server already running from the data dir.',
  ].join('\n'),
  options: { ...dataDirOption, 'http-port': { type: 'string' }, 'tcp-port': { type: 'string' } },
  async run({ values, io }) {
    const httpPort = intOption(values, 'http-port', 1024, 65535);
    const tcpPort = intOption(values, 'tcp-port', 1024, 65526);
    const started = Date.now();
    const server = await LocalClickHouse.start({
      dataDir: dataDirFrom(values, DEFAULT_CLICKHOUSE_DIR),
      ...(httpPort === undefined ? {} : { httpPort }),
      ...(tcpPort === undefined ? {} : { tcpPort }),
    });
    const how = server.wasAlreadyRunning ? 'already running' : 'started';
    io.out(`clickhouse ready (${how}, ${seconds(Date.now() - started)})`);
    io.out(clickHouseStatusLine(server));
  },
};
