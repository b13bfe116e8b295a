import { AT_LEAST_ONCE_KINDS, BUILTIN_STAGES } from '../../app/builtin-stages.ts';
import { loadStage } from '../../app/load-stage.ts';
import { StageResources } from '../../app/stage-resources.ts';
import { createStageTopics } from '../../app/stage-topics.ts';
import { runStages, type RunningStages } from '../../app/run-stages.ts';
import { loadConfig } from '../../config/index.ts';
import type { Stage } from '../../runtime/index.ts';
import type { Command } from '../command.ts';
import { stageSpecs } from '../stage-specs.ts';
import { intOption, stringOption } from '../options.ts';
import { useConfiguredKafkaSecurity } from '../../kafka/security.ts';

export const runCommand: Command = {
  usage:
    '<built-in stage or stage module>... [--name C] [--config config.yaml] [--create-topics] [--partitions N] [--health-host H]',
  help: [
    'Runs stages as exactly-once workers until SIGTERM/SIGINT, wired from the config:',
    'batch and record error settings for its name, the delivery-attempt store, log levels',
    '(logging.*, HAMSTRING_LOG_LEVEL), and /livez, /readyz, /metrics on runtime.health_port.',
    'A module exports the Stage as its default export or as `stage`, or a function (config) => Stage;',
    '.ts modules run as they are. JSON logs go to stdout. Exit 1 when the worker fails for good.',
    'Built-in stages: logserver, collector, prefilter, inspector, detector, alerter, webhook, syslog. Run',
    'several instances of one (here or on other machines, same config): they share the partitions',
    'through their consumer group.',
    'Several stages in one process: name each (collector:dga_collector) or give `all` for every',
    'configured component. They share one event loop, one health server and the node runtime, which',
    'costs less memory than a process each and uses one core at most.',
    '--name           which configured component to run (a collector, prefilter, inspector or',
    '                 detector entry name, or an alerter: generic or a plugin); default the only one;',
    '                 with several stages write <stage>:<entry> instead',
    '--config         default $HAMSTRING_CONFIG, then ./config.yaml',
    '--create-topics  first create the missing input, output and dead-letter topics (without it a',
    '                 missing input topic stops the worker: a typo must not go unnoticed)',
    '--partitions     partitions of the topics created; default 3',
    '--health-host    address of the health server; default runtime.health_host (127.0.0.1); another needs an access token',
  ].join('\n'),
  options: {
    config: { type: 'string', short: 'c' },
    name: { type: 'string', short: 'n' },
    'create-topics': { type: 'boolean' },
    partitions: { type: 'string' },
    'health-host': { type: 'string' },
  },
  positionals: { min: 1, max: 64 },
  async run({ values, positionals, io }) {
    const path = stringOption(values, 'config');
    const config = loadConfig(path !== undefined ? { path } : {});
    useConfiguredKafkaSecurity(config);
    const specs = stageSpecs(
      config,
      positionals,
      stringOption(values, 'name'),
      new Set(BUILTIN_STAGES.keys()),
    );
    const resources = new StageResources();
    try {
      const stages: Stage[] = [];
      const atLeastOnce = new Set<string>();
      for (const { spec, component } of specs) {
        const stage = await loadStage(spec, config, {
          resources,
          ...(component !== undefined ? { component } : {}),
        });
        if (AT_LEAST_ONCE_KINDS.has(spec)) atLeastOnce.add(stage.name);
        stages.push(stage);
      }
      if (values['create-topics'] === true) {
        const topics = await createStageTopics(config, stages, {
          partitions: intOption(values, 'partitions', 1, 10_000) ?? 3,
          onWait: (err, ms) =>
            io.err(`run: cannot create the topics yet (${err.message}); trying again in ${ms} ms`),
        });
        io.err(`run: topics present: ${topics.join(', ')}`);
      }
      const healthHost = stringOption(values, 'health-host');
      const running = await runStages({
        config,
        stages,
        ...(atLeastOnce.size > 0 ? { atLeastOnce } : {}),
        ...(healthHost ? { healthHost } : {}),
      });
      return await outcome(running);
    } finally {
      await resources.close();
    }
  },
};

async function outcome(running: RunningStages): Promise<number> {
  if (!(await running.done)) return 0;
  const failures = running.workers.map((w) => w.status()).filter((s) => s.state === 'failed');
  throw new Error(
    failures.map((s) => `stage ${s.stage} failed: ${s.failure ?? 'unknown reason'}`).join('; '),
  );
}
