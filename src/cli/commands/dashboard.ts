import { dashboardOptionsFromConfig, startDashboard } from '../../app/dashboard/index.ts';
import { loadConfig } from '../../config/index.ts';
import { useConfiguredKafkaSecurity } from '../../kafka/security.ts';
import { createLogger } from '../../observability/logger.ts';
import type { Command } from '../command.ts';
import { stringOption } from '../options.ts';

export const dashboardCommand: Command = {
  usage: '[--config config.yaml] [--metrics URL[,URL...]]',
  help: [
    'Serves the web dashboard (dashboard.host, dashboard.port) over the monitoring tables in',
    'ClickHouse (environment.monitoring.clickhouse_server) until SIGTERM/SIGINT: for a cluster whose',
    'stages run as separate `hamstring run` processes, where no `hamstring up` serves it. The pipeline',
    "page shows each stage's instances, machines and partitions from its consumer group in Kafka.",
    "--metrics  the workers' /metrics endpoints (runtime.health_port of each instance), comma-separated;",
    '           without them the pages show the ClickHouse charts only',
  ].join('\n'),
  options: {
    config: { type: 'string', short: 'c' },
    metrics: { type: 'string' },
  },
  async run({ values, io }) {
    const path = stringOption(values, 'config');
    const config = loadConfig(path !== undefined ? { path } : {});
    // The pipeline page reads the stages' consumer groups from Kafka.
    useConfiguredKafkaSecurity(config);
    const urls = (stringOption(values, 'metrics') ?? '')
      .split(',')
      .map((u) => u.trim())
      .filter((u) => u !== '');
    for (const url of urls)
      if (!URL.canParse(url)) throw new Error(`--metrics: expected http URLs, got ${JSON.stringify(url)}`);
    const log = createLogger();
    const dashboard = await startDashboard(
      dashboardOptionsFromConfig(config, { log, ...(urls.length > 0 ? { metricsSources: urls } : {}) }),
    );
    io.out(`dashboard at ${dashboard.url} (${urls.length} metrics endpoints)`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    await dashboard.close();
    return 0;
  },
};
