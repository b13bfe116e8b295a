import { startSensor } from '../../app/sensors/start-sensor.ts';
import {
  loadConfig,
  sensorSchema,
  type DnstapSensorConfig,
  type HamstringConfig,
  type PcapSensorConfig,
  type SensorConfig,
} from '../../config/index.ts';
import { createLogger } from '../../observability/logger.ts';
import type { Command } from '../command.ts';
import { UsageError } from '../command.ts';
import { intOption, stringOption } from '../options.ts';

/**
 * `hamstring sensor dnstap`: one dnstap sensor in the foreground until SIGINT/SIGTERM. Either a
 * `pipeline.sensors` entry (`--name`) or one built from the flags, with the configuration's
 * defaults for everything the flags do not say (log line mapping, buffer, pairing).
 */
export const dnstapSensorCommand: Command = {
  usage:
    '--unix PATH | --tcp HOST:PORT | --name NAME [--config config.yaml] [--observe TYPES] [--metrics-port N]',
  help: [
    "Receives dnstap (Frame Streams) from a resolver and writes the pipeline's log lines to the",
    "logserver's input topic <logserver_in>-<protocol> (see docs/sources.md, dnstap).",
    '--unix PATH       listen on a Unix socket (the resolver connects to it)',
    '--tcp HOST:PORT   listen on TCP (a port alone: 127.0.0.1); another address needs mutual TLS,',
    "                  configured in the entry's dnstap.tls (docs/security.md): use --name",
    '--name NAME       run the pipeline.sensors entry NAME of the configuration instead',
    '--observe TYPES   dnstap message types giving a line, comma-separated (default CLIENT_RESPONSE)',
    "--protocol P      input topic suffix (default: the first collector's protocol_base)",
    '--metrics-port N  serve Prometheus /metrics on 127.0.0.1:N',
  ].join('\n'),
  options: {
    config: { type: 'string', short: 'c' },
    unix: { type: 'string' },
    tcp: { type: 'string' },
    name: { type: 'string' },
    observe: { type: 'string' },
    protocol: { type: 'string' },
    'metrics-port': { type: 'string' },
  },
  async run({ values, io }) {
    const path = stringOption(values, 'config');
    const config = loadConfig(path !== undefined ? { path } : {});
    return runSensor(config, sensorFromOptions(config, values), io);
  },
};

/**
 * `hamstring sensor pcap`: DNS over UDP and TCP port 53 from a live interface (Debian's dumpcap)
 * or a pcap file, as log lines on the logserver's input topic. Like dnstap, a live capture cannot
 * replay: what the kernel or the buffer drops is counted, not recovered.
 */
export const pcapSensorCommand: Command = {
  usage: '--interface NAME | --file F.pcap | --name NAME [--config config.yaml] [--metrics-port N]',
  help: [
    "Decodes DNS from packets and writes the pipeline's log lines to the logserver's input topic",
    '<logserver_in>-<protocol> (see docs/sources.md, Packet captures).',
    '--interface NAME  capture on this interface (dumpcap; needs the capture capability)',
    '--file F          read this classic pcap file (or named pipe) once',
    '--name NAME       run the pipeline.sensors entry NAME (kind pcap) of the configuration instead',
    "--protocol P      input topic suffix (default: the first collector's protocol_base)",
    '--metrics-port N  serve Prometheus /metrics on 127.0.0.1:N',
  ].join('\n'),
  options: {
    config: { type: 'string', short: 'c' },
    interface: { type: 'string' },
    file: { type: 'string' },
    name: { type: 'string' },
    protocol: { type: 'string' },
    'metrics-port': { type: 'string' },
  },
  async run({ values, io }) {
    const path = stringOption(values, 'config');
    const config = loadConfig(path !== undefined ? { path } : {});
    return runSensor(config, pcapSensorFromOptions(config, values), io);
  },
};

async function runSensor(
  config: HamstringConfig,
  sensor: SensorConfig,
  io: { out(line: string): void },
): Promise<number> {
  const log = createLogger();
  const running = await startSensor(config, sensor, log);
  io.out(
    `sensor ${sensor.name} (${sensor.kind}) -> ${running.topic}` +
      (running.metricsPort !== undefined ? `, metrics on 127.0.0.1:${running.metricsPort}` : ''),
  );
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  const c = await running.stop();
  io.out(`sensor ${sensor.name}: ${JSON.stringify(c)}`);
  return 0;
}

type Values = Record<string, string | boolean | undefined>;

export function sensorFromOptions(config: HamstringConfig, values: Values): DnstapSensorConfig {
  const name = stringOption(values, 'name');
  const unix = stringOption(values, 'unix');
  const tcp = stringOption(values, 'tcp');
  if (name !== undefined) {
    if (unix !== undefined || tcp !== undefined)
      throw new UsageError('--name takes its sockets from the configuration');
    const found = config.pipeline.sensors.find(
      (s): s is DnstapSensorConfig => s.name === name && s.kind === 'dnstap',
    );
    if (found === undefined) throw new UsageError(`--name: pipeline.sensors has no dnstap sensor "${name}"`);
    return found;
  }
  if (unix === undefined && tcp === undefined)
    throw new UsageError('give --unix PATH, --tcp HOST:PORT or --name NAME');
  const observe = stringOption(values, 'observe');
  const protocol = stringOption(values, 'protocol');
  const metricsPort = intOption(values, 'metrics-port', 0, 65535);
  const parsed = sensorSchema.safeParse({
    name: 'dnstap',
    kind: 'dnstap',
    ...(protocol !== undefined ? { protocol } : {}),
    ...(metricsPort !== undefined ? { metrics_port: metricsPort } : {}),
    dnstap: {
      ...(unix !== undefined ? { unix } : {}),
      ...(tcp !== undefined ? { tcp } : {}),
      ...(observe !== undefined ? { observe: observe.split(',').map((t) => t.trim().toUpperCase()) } : {}),
    },
  });
  const sensor = parsedSensor(parsed, {
    tcp: '--tcp',
    tls: '--tcp',
    observe: '--observe',
    protocol: '--protocol',
    metrics_port: '--metrics-port',
  });
  if (sensor.kind !== 'dnstap') throw new UsageError('not a dnstap sensor');
  return sensor;
}

export function pcapSensorFromOptions(config: HamstringConfig, values: Values): PcapSensorConfig {
  const name = stringOption(values, 'name');
  const iface = stringOption(values, 'interface');
  const file = stringOption(values, 'file');
  if (name !== undefined) {
    if (iface !== undefined || file !== undefined)
      throw new UsageError('--name takes its interface or file from the configuration');
    const found = config.pipeline.sensors.find(
      (s): s is PcapSensorConfig => s.name === name && s.kind === 'pcap',
    );
    if (found === undefined) throw new UsageError(`--name: pipeline.sensors has no pcap sensor "${name}"`);
    return found;
  }
  if ((iface === undefined) === (file === undefined))
    throw new UsageError('give one of --interface NAME, --file F.pcap or --name NAME');
  const protocol = stringOption(values, 'protocol');
  const metricsPort = intOption(values, 'metrics-port', 0, 65535);
  const parsed = sensorSchema.safeParse({
    name: 'pcap',
    kind: 'pcap',
    ...(protocol !== undefined ? { protocol } : {}),
    ...(metricsPort !== undefined ? { metrics_port: metricsPort } : {}),
    pcap: { ...(iface !== undefined ? { interface: iface } : {}), ...(file !== undefined ? { file } : {}) },
  });
  const sensor = parsedSensor(parsed, {
    interface: '--interface',
    file: '--file',
    protocol: '--protocol',
    metrics_port: '--metrics-port',
  });
  if (sensor.kind !== 'pcap') throw new UsageError('not a pcap sensor');
  return sensor;
}

/** The parsed sensor, or a usage error naming the flag whose value the schema refused. */
function parsedSensor(
  parsed: ReturnType<typeof sensorSchema.safeParse>,
  flags: Readonly<Record<string, string>>,
): SensorConfig {
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const key = issue?.path.find((p): p is string => typeof p === 'string' && p in flags);
  const flag = key === undefined ? undefined : flags[key];
  throw new UsageError(
    `${flag ?? '--' + String(issue?.path.join('.'))}: expected ${issue?.message ?? 'a valid value'}`,
  );
}
