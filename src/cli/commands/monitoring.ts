import { bootstrapServers, loadConfig } from '../../config/index.ts';
import { logLevelsFromConfig } from '../../app/log-levels.ts';
import { startMonitoringAgent } from '../../app/monitoring-agent.ts';
import { MONITORING_TOPIC_PREFIX } from '../../monitoring/events.ts';
import { ensureMonitoringTopics } from '../../monitoring/topics.ts';
import { createLogger } from '../../observability/logger.ts';
import { instanceIdFrom } from '../../app/worker-config.ts';
import type { Command } from '../command.ts';
import { intOption, stringOption } from '../options.ts';
import { useConfiguredKafkaSecurity } from '../../kafka/security.ts';

/** How often the command checks that the agent's worker has not failed for good. */
const WATCH_INTERVAL_MS = 1_000;

export const monitoringRunCommand: Command = {
  usage:
    '[--config config.yaml] [--database DB] [--topic-prefix P] [--group G] [--partitions N] [--replication-factor R] [--no-create-topics]',
  help: [
    'Runs the monitoring agent: consumes the clickhouse_* topics and inserts their rows into',
    'ClickHouse (environment.monitoring.clickhouse_server), committing offsets after the inserts.',
    'Creates the missing clickhouse_<table> topics and clickhouse_dlt first (--partitions, default 3;',
    '--replication-factor, default the broker default) unless --no-create-topics.',
    'Prints one "monitoring agent ready" line once it holds partitions; stops gracefully on SIGTERM/SIGINT',
    '(in-flight batch discarded uncommitted, consumer leaves the group). Logs go to stderr.',
    '--config        default $HAMSTRING_CONFIG, then ./config.yaml',
    '--database      ClickHouse database of the tables; default environment.monitoring.clickhouse_server.database',
    '--topic-prefix  default clickhouse_',
    '--group         consumer group; default monitoring.agent (replicas share it and split the partitions)',
  ].join('\n'),
  options: {
    config: { type: 'string', short: 'c' },
    database: { type: 'string' },
    'topic-prefix': { type: 'string' },
    group: { type: 'string' },
    partitions: { type: 'string' },
    'replication-factor': { type: 'string' },
    'no-create-topics': { type: 'boolean' },
  },
  async run({ values, io }) {
    const path = stringOption(values, 'config');
    const config = loadConfig(path !== undefined ? { path } : {});
    useConfiguredKafkaSecurity(config);
    const prefix = stringOption(values, 'topic-prefix') ?? MONITORING_TOPIC_PREFIX;
    const database = stringOption(values, 'database');
    const group = stringOption(values, 'group');
    const bootstrap = bootstrapServers(config);
    const stop = new AbortController();
    const onSignal = (signal: NodeJS.Signals) => {
      io.err(`monitoring: ${signal} received, stopping`);
      stop.abort();
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
    try {
      if (values['no-create-topics'] !== true) {
        const partitions = intOption(values, 'partitions', 1, 10_000);
        const rf = stringOption(values, 'replication-factor');
        const topics = await ensureMonitoringTopics(bootstrap, {
          topicPrefix: prefix,
          ...(partitions !== undefined ? { partitions } : {}),
          ...(rf !== undefined ? { replicationFactor: intOption(values, 'replication-factor', 1, 100) } : {}),
          signal: stop.signal,
          onWait: (err, ms) =>
            io.err(
              `monitoring: kafka unreachable, cannot create the topics yet (${err.message}); trying again in ${ms} ms`,
            ),
        });
        io.err(`monitoring: ${topics.length} topics present (${prefix}*)`);
      }
      const instanceId = instanceIdFrom(config);
      const agent = await startMonitoringAgent(config, {
        instanceId,
        // logging.base.debug, logging.modules.<group>.debug and HAMSTRING_LOG_LEVEL, as for any stage.
        log: createLogger({}, 2, logLevelsFromConfig(config).stage(group ?? 'monitoring.agent')),
        topicPrefix: prefix,
        ...(database !== undefined ? { database } : {}),
        ...(group !== undefined ? { groupId: group } : {}),
        signal: stop.signal,
      });
      // "ready" means consuming: it holds partitions, not merely that the worker started.
      if (!stop.signal.aborted && (await agent.whenConsuming()))
        io.out(
          `monitoring agent ready: instance ${instanceId}, kafka ${bootstrap}, clickhouse ${agent.clickhouseVersion}, topics ${prefix}*`,
        );
      const failure = await new Promise<string | undefined>((resolve) => {
        if (stop.signal.aborted) return resolve(undefined);
        const timer = setInterval(() => {
          let status;
          try {
            status = agent.worker.status();
          } catch {
            return; // between workers while recovering from an outage
          }
          if (status.state === 'failed') {
            clearInterval(timer);
            resolve(status.failure ?? 'worker failed');
          }
        }, WATCH_INTERVAL_MS);
        stop.signal.addEventListener(
          'abort',
          () => {
            clearInterval(timer);
            resolve(undefined);
          },
          { once: true },
        );
      });
      await agent.stop();
      if (failure !== undefined) throw new Error(`monitoring agent failed: ${failure}`);
      io.out('monitoring agent stopped');
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    }
  },
};
