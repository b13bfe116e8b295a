import { join } from 'node:path';
import { LocalClickHouse } from '../../dev/clickhouse-server.ts';
import { MachineNetwork } from '../../dev/machine-network.ts';
import { defaultVarDir, projectRoot, resolveDataDir } from '../../dev/paths.ts';
import { feedLines, verifyTraffic } from '../../verify/pipeline/feed.ts';
import { SimulatedPipeline, type InstanceCounts } from '../../verify/cluster/simulated-pipeline.ts';
import { trimmedConfig } from '../../verify/cluster/trim-config.ts';
import { UsageError, type Command } from '../command.ts';
import { intOption, stringOption } from '../options.ts';

/** The machines' tag when none is given: names `hsm30592...`, subnet 10.214.160.0/24. */
const DEFAULT_TAG = 30_592;

export const machinesStartCommand: Command = {
  usage:
    '[--machines N] [--instances kind=n,...] [--partitions N] [--tag T] [--dir D] [--rate R --seconds S] [--drop a,b]',
  help: [
    'Builds N simulated machines on this host (network namespaces on one bridge, root needed), a',
    'KRaft node on each of the first three bound to its address, and on every machine `instances`',
    '`hamstring run` processes per stage; ClickHouse and the monitoring agent run on the host. Runs',
    'until SIGINT/SIGTERM, then tears everything down. A leftover of a crashed run with the same tag',
    'is replaced.',
    '--machines    default 3 (at least 3)',
    '--instances   processes per stage kind per machine, e.g. collector=2 (default 1 each)',
    '--partitions  partitions of the topics the stages create; default 6',
    '--tag         names the machines hsm<T>m<i>, subnet 10.214.(T mod 256).0/24; default 30592',
    '--rate        seeded lines per second fed to the logserver for --seconds (default: no traffic)',
    '--drop        prefilters, inspectors or detectors left out of config.yaml (one chain only)',
  ].join('\n'),
  options: {
    machines: { type: 'string' },
    instances: { type: 'string' },
    partitions: { type: 'string' },
    tag: { type: 'string' },
    dir: { type: 'string' },
    rate: { type: 'string' },
    seconds: { type: 'string' },
    drop: { type: 'string' },
    'clickhouse-http-port': { type: 'string' },
  },
  async run({ values, io }) {
    const unavailable = MachineNetwork.unavailableReason();
    if (unavailable !== undefined) throw new Error(`cannot build simulated machines: ${unavailable}`);
    const tag = intOption(values, 'tag', 0, 99_999) ?? DEFAULT_TAG;
    const given = stringOption(values, 'dir');
    // Absolute: the Kafka nodes run with their own directory as working directory.
    const dir = given === undefined ? defaultVarDir('machines') : resolveDataDir(given);
    const httpPort = intOption(values, 'clickhouse-http-port', 1024, 65_000) ?? 28_123;
    const clickhouse = await LocalClickHouse.start({
      dataDir: join(dir, 'clickhouse'),
      httpPort,
      tcpPort: httpPort + 1,
    });
    const drop = (stringOption(values, 'drop') ?? '').split(',').filter(Boolean);
    const started = Date.now();
    const pipeline = await SimulatedPipeline.start({
      tag,
      machines: intOption(values, 'machines', 3, 20) ?? 3,
      instances: parseInstances(stringOption(values, 'instances')),
      dir: join(dir, 'run'),
      brokerPort: 9092,
      partitions: intOption(values, 'partitions', 1, 1000) ?? 6,
      clickhouse,
      database: 'machines',
      baseConfig: trimmedConfig(join(projectRoot, 'config.yaml'), dir, drop),
      inspectors: 'shipped',
    }).catch(async (e: unknown) => {
      await clickhouse.stop();
      throw e;
    });
    const stop = new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    try {
      const input = await pipeline.startPipeline();
      io.out(`machines ready (${((Date.now() - started) / 1000).toFixed(0)} s):`);
      for (const m of pipeline.network.machines) {
        const labels = pipeline.processes.labels().filter((l) => SimulatedPipeline.machineOf(l) === m.name);
        io.out(`  ${m.name} ${m.address} (ip netns exec ${m.namespace}): ${labels.length} processes`);
      }
      io.out(`  kafka ${pipeline.kafka.bootstrapServers}; clickhouse 127.0.0.1:${httpPort}; input ${input}`);
      const rate = intOption(values, 'rate', 1, 100_000);
      if (rate !== undefined) {
        const seconds = intOption(values, 'seconds', 1, 86_400) ?? 60;
        const traffic = verifyTraffic({
          seed: 1,
          hosts: 40,
          rate,
          durationSeconds: seconds,
          hostileEvery: 0,
        });
        void feedLines(pipeline.kafka.bootstrapServers, input, traffic.lines, seconds * 1000).then(
          () => io.out(`fed ${traffic.lines.length} lines`),
          (e: Error) => io.err(`feed failed: ${e.message}`),
        );
      }
      io.out('Ctrl-C tears everything down');
      await stop;
    } finally {
      await pipeline.close();
      await clickhouse.stop();
      io.out('machines removed');
    }
  },
};

export const machinesRemoveCommand: Command = {
  usage: '[--tag T]',
  help: 'Kills every process left on the simulated machines of tag T and removes them (after a crash).',
  options: { tag: { type: 'string' } },
  run({ values, io }) {
    const tag = intOption(values, 'tag', 0, 99_999) ?? DEFAULT_TAG;
    MachineNetwork.remove(tag);
    io.out(`simulated machines of tag ${tag} removed`);
  },
};

/** `collector=2,detector=1` into counts per stage kind. */
export function parseInstances(text: string | undefined): InstanceCounts {
  const counts: Record<string, number> = {};
  for (const part of (text ?? '').split(',').filter(Boolean)) {
    const [kind, n] = part.split('=');
    const value = Number(n);
    if (kind === undefined || kind === '' || !Number.isInteger(value) || value < 1 || value > 16)
      throw new UsageError(`--instances: expected kind=n (n in 1..16), got ${part}`);
    counts[kind] = value;
  }
  return counts;
}
