import { fileLogger, startDemoViews, type DemoViews } from '../../app/demo.ts';
import { startPipeline, type RunningPipeline } from '../../app/pipeline.ts';
import { startResolverFeed } from '../../app/resolver-feed.ts';
import { startTrafficFeed, type TrafficFeed } from '../../app/traffic-feed.ts';
import { projectRoot } from '../../dev/paths.ts';
import { loadConfig, type HamstringConfig } from '../../config/index.ts';
import { createLogger } from '../../observability/logger.ts';
import { join } from 'node:path';
import type { Command, CommandIo } from '../command.ts';
import { intOption, stringOption } from '../options.ts';
import { startLocalServices } from '../local-services.ts';
import { useConfiguredKafkaSecurity } from '../../kafka/security.ts';

const DEMO_LOG = 'var/log/hamstring-up.log';
/** How long the summary waits for the monitoring agent's last inserts. */
const AGENT_DRAIN_MS = 30_000;

export const upCommand: Command = {
  usage:
    '[--config config.yaml] [--partitions N] [--demo [--source generator|unbound] [--rate N] [--duration S] [--hosts N] [--seed N]] [--services-only]',
  help: [
    'Runs HAMSTRING in one process: every configured stage (each its own exactly-once worker, DGA',
    'scoring in a thread pool) and the monitoring agent, until Ctrl-C; a second Ctrl-C exits at once.',
    'When no bootstrap server is configured (environment.kafka_bootstrap_servers, KAFKA_BOOTSTRAP_SERVERS)',
    'it first starts a 1-node Kafka (var/kafka, 127.0.0.1:9092) and ClickHouse (var/clickhouse, :8123),',
    'or attaches to them when they run. Missing pipeline, monitoring and dead-letter topics are created.',
    '--partitions     partitions of the topics created; default 3',
    '--services-only  start the local Kafka and ClickHouse, then exit',
    '--demo           also feed generated DNS traffic (benign hosts, DGA-infected hosts, one tunnel)',
    '                 into the input topic, serve the dashboard (dashboard.port), show the live',
    "                 terminal view and print what was found against the generator's truth;",
    '                 JSON logs then go to var/log/hamstring-up.log',
    '--source         generator (default): the lines go straight to the input topic; unbound: each',
    "                 line is a real DNS query to a private Unbound (Debian's), from the host's own",
    '                 loopback address, and a dnstap sensor turns what Unbound saw into the log lines',
    '--rate           lines per second; default 200',
    '--duration       seconds of traffic; default 300 (the summary follows once the last batches left)',
    '--hosts          hosts in the traffic; default 200',
    '--seed           traffic seed; default 1',
  ].join('\n'),
  options: {
    config: { type: 'string', short: 'c' },
    partitions: { type: 'string' },
    'services-only': { type: 'boolean' },
    demo: { type: 'boolean' },
    rate: { type: 'string' },
    duration: { type: 'string' },
    hosts: { type: 'string' },
    seed: { type: 'string' },
    source: { type: 'string' },
  },
  async run({ values, io }) {
    const path = stringOption(values, 'config');
    const config = loadConfig(path !== undefined ? { path } : {});
    useConfiguredKafkaSecurity(config);
    if (config.environment.kafka_bootstrap_servers === undefined) await startLocalServices(io);
    else io.out(`up: using the configured Kafka ${config.environment.kafka_bootstrap_servers}`);
    if (values['services-only'] === true) return 0;

    const demo = values.demo === true;
    const source = stringOption(values, 'source') ?? 'generator';
    if (source !== 'generator' && source !== 'unbound')
      throw new Error(`up: --source must be generator or unbound, not ${source}`);
    if (source === 'unbound' && !demo) throw new Error('up: --source unbound needs --demo');
    // In the demo the terminal shows the live view; the JSON logs go to a file.
    const log = demo
      ? fileLogger(DEMO_LOG, process.env.HAMSTRING_LOG_LEVEL ?? 'info')
      : createLogger({ component: 'up' });
    if (demo) io.out(`up: logs in ${DEMO_LOG}`);
    const stop = stopSignal(io);
    const pipeline = await startPipeline({
      config,
      partitions: intOption(values, 'partitions', 1, 10_000) ?? 3,
      log,
    });
    io.out(
      `up: running ${pipeline.components.map((c) => `${c.kind} ${c.name}`).join(', ')}, monitoring agent`,
    );
    let feed: TrafficFeed | undefined;
    let views: DemoViews | undefined;
    try {
      if (demo) {
        const since = Date.now();
        const traffic = {
          config,
          log,
          rate: intOption(values, 'rate', 1, 1_000_000) ?? 200,
          durationSeconds: intOption(values, 'duration', 1, 86_400 * 7) ?? 300,
          hosts: intOption(values, 'hosts', 6, 1_000_000) ?? 200,
          seed: intOption(values, 'seed', 0, 2 ** 31) ?? 1,
        };
        feed =
          source === 'unbound'
            ? await startResolverFeed({ ...traffic, dir: join(projectRoot, 'var', 'demo', 'unbound') })
            : await startTrafficFeed(traffic);
        io.out(
          source === 'unbound'
            ? `up: ${feed.truth.length} hosts asking a private Unbound from 127.x addresses; dnstap sensor -> ${feed.topic}`
            : `up: feeding ${feed.topic} with generated traffic of ${feed.truth.length} hosts`,
        );
        views = await startDemoViews({ config, pipeline, feed, log, since });
        io.out(
          views.dashboard
            ? `up: dashboard at ${views.dashboard.url}`
            : 'up: dashboard off (dashboard.enabled)',
        );
      }
      const ended = await Promise.race([
        stop.signalled.then(() => 'signal' as const),
        pipeline.done.then((failed) => (failed ? ('failed' as const) : ('stopped' as const))),
        ...(feed
          ? [feed.done.then(() => drained(config, stop.signalled)).then(() => 'traffic' as const)]
          : []),
      ]);
      io.out(`up: stopping (${ended === 'traffic' ? 'traffic done and drained' : ended})`);
      await feed?.stop();
      if (views) {
        // The summary reads ClickHouse: first the stages' last transactions, then the agent's inserts.
        await pipeline.stopStages();
        const drain = await pipeline.drainAgent({ timeoutMs: AGENT_DRAIN_MS });
        io.out(
          drain.drained
            ? `up: monitoring agent drained (${drain.waitedMs} ms${drain.behind.length > 0 ? `; ${drain.behind.length} partitions end in aborted transactions` : ''})`
            : `up: monitoring agent not drained after ${drain.waitedMs} ms (${drain.behind.length} partitions behind); the summary may miss their rows`,
        );
        io.out(await views.finish());
      }
      return await shutdown(pipeline, io);
    } finally {
      await views?.close();
      stop.dispose();
    }
  },
};

/** After the last line: one batch_timeout for the collectors' last batches, plus time for the stages after it. */
async function drained(config: HamstringConfig, signalled: Promise<void>): Promise<void> {
  const timeouts = config.pipeline.log_collection.collectors.map(
    (c) => c.batch_handler_config_override?.batch_timeout ?? 0,
  );
  const ms =
    (Math.max(config.pipeline.log_collection.default_batch_handler_config.batch_timeout, ...timeouts) + 10) *
    1000;
  await Promise.race([new Promise((resolve) => setTimeout(resolve, ms)), signalled]);
}

async function shutdown(pipeline: RunningPipeline, io: CommandIo): Promise<number> {
  await pipeline.stop();
  const failed = pipeline.stages.workers.map((w) => w.status()).filter((s) => s.state === 'failed');
  if (failed.length > 0)
    throw new Error(
      failed.map((s) => `stage ${s.stage} failed: ${s.failure ?? 'unknown reason'}`).join('; '),
    );
  io.out('up: stopped');
  return 0;
}

/** The first SIGINT/SIGTERM starts a clean stop; a second one exits at once. */
function stopSignal(io: CommandIo): { signalled: Promise<void>; dispose(): void } {
  let resolve!: () => void;
  const signalled = new Promise<void>((r) => (resolve = r));
  let count = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    count += 1;
    if (count > 1) {
      io.err(`up: second ${signal}, exiting now`);
      process.exit(130);
    }
    io.err(`up: ${signal} received, stopping cleanly (again to exit at once)`);
    resolve();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signalled,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
