import { agentAcls, renderAclCommands, stageAcls } from '../../app/acl-plan.ts';
import { loadStage } from '../../app/load-stage.ts';
import { StageResources } from '../../app/stage-resources.ts';
import { bootstrapServers, loadConfig, resolveKafkaSecurity } from '../../config/index.ts';
import { principalOf } from '../../kafka/security.ts';
import { UsageError, type Command } from '../command.ts';
import { stringOption } from '../options.ts';

/** The positional that names the monitoring agent rather than a stage. */
const AGENT = 'monitoring-agent';

export const aclPlanCommand: Command = {
  usage:
    '<built-in stage, stage module or monitoring-agent>... [--name C] [--principal User:NAME] [--config config.yaml]',
  help: [
    'Prints the ACLs each given stage needs on a cluster with an authorizer, as kafka-acls.sh',
    'commands: read its inputs, write its outputs, dead-letter, retry and changelog topics and the',
    'delivery-attempt topic, create the topics the worker creates, its consumer group and its',
    'transactional ids. Names come from the same config the workers read. Connects to nothing.',
    "`monitoring-agent` prints the monitoring agent's: read the monitoring topics and its group,",
    'write its dead-letter topic (`hamstring up` or the operator creates the monitoring topics).',
    '--principal  default the SASL user of environment.kafka_security (User:<username>)',
    '--name       which configured component of each stage (as for `hamstring run`)',
  ].join('\n'),
  options: {
    config: { type: 'string', short: 'c' },
    name: { type: 'string', short: 'n' },
    principal: { type: 'string' },
  },
  positionals: { min: 1, max: 20 },
  async run({ values, positionals, io }) {
    const path = stringOption(values, 'config');
    const config = loadConfig(path !== undefined ? { path } : {});
    const security = config.environment.kafka_security;
    const principal =
      stringOption(values, 'principal') ??
      (security?.sasl !== undefined ? principalOf(resolveKafkaSecurity(security)) : undefined);
    if (principal === undefined)
      throw new UsageError('--principal is required when environment.kafka_security has no SASL user');
    const component = stringOption(values, 'name');
    const resources = new StageResources();
    try {
      const lines: string[] = [];
      for (const spec of positionals) {
        if (spec === AGENT) {
          lines.push(...renderAclCommands(agentAcls(principal), bootstrapServers(config)));
          continue;
        }
        const stage = await loadStage(spec, config, {
          resources,
          ...(component !== undefined ? { component } : {}),
        });
        lines.push(...renderAclCommands(stageAcls(config, stage, principal), bootstrapServers(config)));
      }
      for (const line of lines) io.out(line);
      return 0;
    } finally {
      await resources.close();
    }
  },
};
