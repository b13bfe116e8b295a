import { bootstrapServers, loadConfig, type HamstringConfig } from '../../config/index.ts';
import { createLogger } from '../../observability/logger.ts';
import { replayDeadLetters, unreplayableTopic, type ReplaySummary } from '../../app/dlt-replay.ts';
import { kafkaOptionsFromConfig } from '../../app/worker-config.ts';
import type { WorkerKafkaOptions } from '../../runtime/index.ts';
import { UsageError, type Command, type CommandIo } from '../command.ts';
import { useConfiguredKafkaSecurity } from '../../kafka/security.ts';

/** Exit code when some dead letters had no origin and were moved to `<dlt>.unreplayable`. */
export const EXIT_UNREPLAYABLE = 3;

/**
 * Worker Kafka options: config.yaml's client settings (via `kafkaOptionsFromConfig`, so env
 * overrides apply as for any stage) with `bootstrap`; without a config file (`--bootstrap` alone)
 * the schema's defaults.
 */
export function replayKafkaOptions(
  config: HamstringConfig | undefined,
  bootstrap: string,
): WorkerKafkaOptions {
  if (config) return kafkaOptionsFromConfig(config, { bootstrapServers: bootstrap });
  return {
    bootstrapServers: bootstrap,
    groupProtocol: 'classic',
    assignmentStrategy: 'cooperative-sticky',
    sessionTimeoutMs: 45_000,
    heartbeatIntervalMs: 3_000,
    maxPollIntervalMs: 300_000,
    transactionTimeoutMs: 60_000,
    messageTimeoutMs: 60_000,
    apiTimeoutMs: 30_000,
    commitRetryTimeoutMs: 30_000,
  };
}

export function printSummary(s: ReplaySummary, io: CommandIo): void {
  const verb = s.dryRun ? 'would replay' : 'replayed';
  if (s.dryRun) {
    for (const d of s.decisions)
      io.out(
        `  ${s.dltTopic}@${d.partition}:${d.offset} -> ${d.target ?? `${unreplayableTopic(s.dltTopic)} (${d.reason ?? 'no target'})`}`,
      );
  }
  const total = Object.values(s.replayed).reduce((a, b) => a + b, 0);
  io.out(
    `dlt replay ${s.dltTopic}: ${verb} ${total} record(s)${s.dryRun ? ' (dry run, nothing committed)' : ''}`,
  );
  for (const [topic, n] of Object.entries(s.replayed).sort()) io.out(`  ${topic}: ${n}`);
  if (s.unreplayable.length > 0) {
    io.err(
      `dlt replay ${s.dltTopic}: ${s.unreplayable.length} record(s) without an origin topic ${s.dryRun ? 'would be' : 'were'} moved to ${unreplayableTopic(s.dltTopic)}:`,
    );
    for (const d of s.unreplayable) io.err(`  ${s.dltTopic}@${d.partition}:${d.offset}: ${d.reason ?? ''}`);
  }
}

export const dltReplayCommand: Command = {
  usage: '<dlt-topic> [--bootstrap HOST:PORT] [--to TOPIC] [--dry-run] [--timeout SECONDS]',
  help: [
    'Re-publishes the dead letters of <dlt-topic> to the topic named in their',
    'hamstring.dlt.original.topic header (or --to), exactly once: original key, value and',
    'headers, without the hamstring.dlt.* headers, plus hamstring.replayed-from. Progress is the',
    'consumer group hamstring-dlt-replay.<dlt-topic>: a second run replays only what was dead-',
    'lettered since; a run that was killed resumes where its last transaction committed.',
    'The run stops by itself once everything up to the high watermarks seen at start is replayed.',
    'Dead letters without an origin header are moved to <dlt-topic>.unreplayable (in the same',
    `transaction) and reported; the exit code is then ${EXIT_UNREPLAYABLE}.`,
    '--dry-run lists what would be replayed and commits nothing.',
    '--bootstrap defaults to the brokers of config.yaml.',
  ].join('\n'),
  options: {
    bootstrap: { type: 'string' },
    to: { type: 'string' },
    'dry-run': { type: 'boolean' },
    timeout: { type: 'string' },
  },
  positionals: { min: 1, max: 1 },
  async run({ values, positionals, io }) {
    const dltTopic = positionals[0]!;
    const timeout = values.timeout === undefined ? 600 : Number(values.timeout);
    if (!Number.isFinite(timeout) || timeout <= 0)
      throw new UsageError('--timeout must be a positive number of seconds');
    let config: HamstringConfig | undefined;
    try {
      config = loadConfig();
    } catch (e) {
      if (typeof values.bootstrap !== 'string') throw e;
    }
    // A config that loads but names an unreadable password file is an error even with --bootstrap.
    if (config) useConfiguredKafkaSecurity(config);
    const bootstrap = typeof values.bootstrap === 'string' ? values.bootstrap : bootstrapServers(config!);
    const summary = await replayDeadLetters({
      dltTopic,
      kafka: replayKafkaOptions(config, bootstrap),
      ...(typeof values.to === 'string' ? { to: values.to } : {}),
      dryRun: values['dry-run'] === true,
      timeoutMs: timeout * 1000,
      ...(config
        ? {
            attemptTopic: config.environment.record_errors.track_delivery_attempts
              ? config.environment.record_errors.delivery_attempts_topic
              : false,
          }
        : {}),
      // Results go to stdout; the worker's log lines to stderr.
      log: createLogger({}, 2),
    });
    printSummary(summary, io);
    return summary.unreplayable.length > 0 ? EXIT_UNREPLAYABLE : 0;
  },
};
