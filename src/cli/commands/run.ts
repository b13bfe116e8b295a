import { loadStage } from '../../app/load-stage.ts';
import { createStageTopics } from '../../app/stage-topics.ts';
import { runStages } from '../../app/run-stages.ts';
import { loadConfig } from '../../config/index.ts';
import type { Command } from '../command.ts';
import { intOption, stringOption } from '../options.ts';

export const runCommand: Command = {
  usage:
    '<stage module or built-in name> [--config config.yaml] [--create-topics] [--partitions N] [--health-host H]',
  help: [
    'Runs one stage as an exactly-once worker until SIGTERM/SIGINT, wired from the config:',
    'batch and record error settings for its name, the delivery-attempt store, log levels',
    '(logging.*, HAMSTRING_LOG_LEVEL), and /livez, /readyz, /metrics on runtime.health_port.',
    'A module exports the Stage as its default export or as `stage`, or a function (config) => Stage;',
    '.ts modules run as they are. JSON logs go to stdout. Exit 1 when the worker fails for good.',
    '--config         default $HAMSTRING_CONFIG, then ./config.yaml',
    '--create-topics  first create the missing input, output and dead-letter topics (without it a',
    '                 missing input topic stops the worker: a typo must not go unnoticed)',
    '--partitions     partitions of the topics created; default 3',
    '--health-host    address of the health server; default 127.0.0.1 (0.0.0.0 in a container)',
  ].join('\n'),
  options: {
    config: { type: 'string', short: 'c' },
    'create-topics': { type: 'boolean' },
    partitions: { type: 'string' },
    'health-host': { type: 'string' },
  },
  positionals: { min: 1, max: 1 },
  async run({ values, positionals, io }) {
    const path = stringOption(values, 'config');
    const config = loadConfig(path !== undefined ? { path } : {});
    const stage = await loadStage(positionals[0]!, config);
    if (values['create-topics'] === true) {
      const topics = await createStageTopics(config, [stage], {
        partitions: intOption(values, 'partitions', 1, 10_000) ?? 3,
      });
      io.err(`run: topics present: ${topics.join(', ')}`);
    }
    const healthHost = stringOption(values, 'health-host');
    const running = await runStages({ config, stages: [stage], ...(healthHost ? { healthHost } : {}) });
    if (!(await running.done)) return 0;
    const failures = running.workers.map((w) => w.status()).filter((s) => s.state === 'failed');
    throw new Error(
      failures.map((s) => `stage ${s.stage} failed: ${s.failure ?? 'unknown reason'}`).join('; '),
    );
  },
};
