import { LocalKafkaCluster } from '../../dev/kafka-cluster.ts';
import { UsageError, type Command } from '../command.ts';
import { DEFAULT_KAFKA_DIR, dataDirFrom, dataDirOption } from '../dev-options.ts';
import { seconds, showPath } from '../format.ts';
import { intOption } from '../options.ts';
import { kafkaStatusLines } from '../status-lines.ts';

/** Exit code of `status` when nothing runs, so scripts can test for it. */
const NOT_RUNNING = 3;

export const kafkaStartCommand: Command = {
  usage: '[--nodes 1|3] [--data-dir D] [--port P]',
  help: [
    '--nodes     1 or 3 combined broker+controller nodes; default 1, or the size of the running cluster',
    '--data-dir  default var/kafka',
    '--port      base port: node i listens on P+(i-1)*10 (broker) and +1 (controller); default 9092',
    'Idempotent: attaches to the cluster already running from the data dir.',
  ].join('\n'),
  options: { ...dataDirOption, nodes: { type: 'string', short: 'n' }, port: { type: 'string', short: 'p' } },
  async run({ values, io }) {
    const nodes = intOption(values, 'nodes', 1, 3);
    if (nodes !== undefined && nodes !== 1 && nodes !== 3) throw new UsageError('--nodes must be 1 or 3');
    const basePort = intOption(values, 'port', 1024, 65000);
    const dataDir = dataDirFrom(values, DEFAULT_KAFKA_DIR);
    const runningSize = LocalKafkaCluster.attach(dataDir)?.nodeIds().length === 3 ? 3 : 1;
    const started = Date.now();
    const cluster = await LocalKafkaCluster.start({
      nodes: nodes ?? runningSize,
      dataDir,
      ...(basePort === undefined ? {} : { basePort }),
    });
    const how = cluster.wasAlreadyRunning ? 'already running' : 'started';
    io.out(`kafka ready (${how}, ${seconds(Date.now() - started)})`);
    for (const line of kafkaStatusLines(cluster)) io.out(line);
  },
};

export const kafkaStatusCommand: Command = {
  usage: '[--data-dir D]',
  help: `Exit code ${NOT_RUNNING} when no node runs.`,
  options: dataDirOption,
  run({ values, io }) {
    const dataDir = dataDirFrom(values, DEFAULT_KAFKA_DIR);
    const cluster = LocalKafkaCluster.attach(dataDir);
    if (!cluster) {
      io.out(`kafka not running (data ${showPath(dataDir)})`);
      return NOT_RUNNING;
    }
    for (const line of kafkaStatusLines(cluster)) io.out(line);
  },
};

export const kafkaStopCommand: Command = {
  usage: '[--data-dir D]',
  options: dataDirOption,
  async run({ values, io }) {
    const dataDir = dataDirFrom(values, DEFAULT_KAFKA_DIR);
    const cluster = LocalKafkaCluster.attach(dataDir);
    if (!cluster) {
      io.out(`kafka not running (data ${showPath(dataDir)})`);
      return;
    }
    const started = Date.now();
    await cluster.stop();
    io.out(`kafka stopped (${seconds(Date.now() - started)}; data kept in ${showPath(dataDir)})`);
  },
};
