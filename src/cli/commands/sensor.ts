import { startSensor } from '../../app/sensors/start-sensor.ts';
import { loadConfig, sensorSchema, type HamstringConfig, type SensorConfig } from '../../config/index.ts';
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
    '--tcp HOST:PORT   listen on TCP (127.0.0.1 unless the network is trusted: dnstap is not authenticated)',
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
    const sensor = sensorFromOptions(config, values);
    const log = createLogger();
    const running = await startSensor(config, sensor, log);
    io.out(
      `sensor ${sensor.name} (dnstap) -> ${running.topic}` +
        (running.metricsPort !== undefined ? `, metrics on 127.0.0.1:${running.metricsPort}` : ''),
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    const c = await running.stop();
    io.out(`sensor ${sensor.name}: ${JSON.stringify(c)}`);
    return 0;
  },
};

type Values = Record<string, string | boolean | undefined>;

export function sensorFromOptions(config: HamstringConfig, values: Values): SensorConfig {
  const name = stringOption(values, 'name');
  const unix = stringOption(values, 'unix');
  const tcp = stringOption(values, 'tcp');
  if (name !== undefined) {
    if (unix !== undefined || tcp !== undefined)
      throw new UsageError('--name takes its sockets from the configuration');
    const found = config.pipeline.sensors.find((s) => s.name === name && s.kind === 'dnstap');
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
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const flags: Record<string, string> = {
      tcp: '--tcp',
      observe: '--observe',
      protocol: '--protocol',
      metrics_port: '--metrics-port',
    };
    const key = issue?.path.find((p): p is string => typeof p === 'string' && p in flags);
    const flag = key === undefined ? undefined : flags[key];
    throw new UsageError(
      `${flag ?? '--' + String(issue?.path.join('.'))}: expected ${issue?.message ?? 'a valid value'}`,
    );
  }
  return parsed.data;
}
