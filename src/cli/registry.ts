import type { Command } from './command.ts';

/** A registered command: its one-line summary (for the usage list) and a lazy loader. */
export interface CommandEntry {
  summary: string;
  load: () => Promise<Command>;
}

/**
 * Every `hamstring` command, keyed by its path ("dev kafka start"). To add one, create a module
 * in `src/cli/commands/` and add one line here; the dispatcher needs no change. Modules load
 * lazily, so a command's dependencies (the Kafka client, ClickHouse) cost nothing to the others.
 */
export const commands: Record<string, CommandEntry> = {
  run: {
    summary: 'run a stage (a module exporting a Stage, or a built-in name) as an exactly-once worker',
    load: async () => (await import('./commands/run.ts')).runCommand,
  },
  up: {
    summary:
      'run every stage and the monitoring agent in one process (--demo: traffic, dashboard, live view)',
    load: async () => (await import('./commands/up.ts')).upCommand,
  },
  dashboard: {
    summary: "serve the web dashboard over ClickHouse and the workers' /metrics endpoints",
    load: async () => (await import('./commands/dashboard.ts')).dashboardCommand,
  },
  'dev kafka start': {
    summary: 'start (or attach to) a local Kafka cluster of 1 or 3 nodes',
    load: async () => (await import('./commands/dev-kafka.ts')).kafkaStartCommand,
  },
  'dev kafka status': {
    summary: 'show the local Kafka cluster and its nodes',
    load: async () => (await import('./commands/dev-kafka.ts')).kafkaStatusCommand,
  },
  'dev kafka stop': {
    summary: 'stop the local Kafka cluster (data kept)',
    load: async () => (await import('./commands/dev-kafka.ts')).kafkaStopCommand,
  },
  'dev kafka kill': {
    summary: 'kill -9 one node',
    load: async () => (await import('./commands/dev-kafka-node.ts')).kafkaNodeCommand('kill'),
  },
  'dev kafka pause': {
    summary: 'SIGSTOP one node',
    load: async () => (await import('./commands/dev-kafka-node.ts')).kafkaNodeCommand('pause'),
  },
  'dev kafka resume': {
    summary: 'SIGCONT one paused node',
    load: async () => (await import('./commands/dev-kafka-node.ts')).kafkaNodeCommand('resume'),
  },
  'dev kafka stop-node': {
    summary: 'stop one node gracefully',
    load: async () => (await import('./commands/dev-kafka-node.ts')).kafkaNodeCommand('stop-node'),
  },
  'dev kafka start-node': {
    summary: 'restart one stopped or killed node, wait until it is back in sync',
    load: async () => (await import('./commands/dev-kafka-node.ts')).kafkaNodeCommand('start-node'),
  },
  'dev machines start': {
    summary: 'simulated machines (network namespaces): a KRaft node and every stage on each, until Ctrl-C',
    load: async () => (await import('./commands/dev-machines.ts')).machinesStartCommand,
  },
  'dev machines remove': {
    summary: 'kill what is left on the simulated machines of a tag and remove them',
    load: async () => (await import('./commands/dev-machines.ts')).machinesRemoveCommand,
  },
  'acl-plan': {
    summary: 'print the Kafka ACLs each given stage needs, as kafka-acls.sh commands',
    load: async () => (await import('./commands/acl-plan.ts')).aclPlanCommand,
  },
  'dlt replay': {
    summary: 'replay the dead letters of a DLT to their origin topics, exactly once',
    load: async () => (await import('./commands/dlt-replay.ts')).dltReplayCommand,
  },
  'dev clickhouse start': {
    summary: 'start (or attach to) a local ClickHouse server',
    load: async () => (await import('./commands/dev-clickhouse.ts')).clickHouseCommand('start'),
  },
  'dev clickhouse status': {
    summary: 'show the local ClickHouse server',
    load: async () => (await import('./commands/dev-clickhouse.ts')).clickHouseCommand('status'),
  },
  'dev clickhouse stop': {
    summary: 'stop the local ClickHouse server (data kept)',
    load: async () => (await import('./commands/dev-clickhouse.ts')).clickHouseCommand('stop'),
  },
  'dev clickhouse kill': {
    summary: 'kill -9 the local ClickHouse server',
    load: async () => (await import('./commands/dev-clickhouse.ts')).clickHouseCommand('kill'),
  },
  verify: {
    summary: 'seed, run worker processes under faults, check exactly-once (see docs/verify.md)',
    load: async () => (await import('./commands/verify.ts')).verifyCommand,
  },
  'sensor dnstap': {
    summary: "receive dnstap from a resolver (Unix socket or TCP) into the logserver's input topic",
    load: async () => (await import('./commands/sensor.ts')).dnstapSensorCommand,
  },
  'sensor pcap': {
    summary: "decode DNS from a live interface or a pcap file into the logserver's input topic",
    load: async () => (await import('./commands/sensor.ts')).pcapSensorCommand,
  },
  'monitoring run': {
    summary: 'run the monitoring agent (clickhouse_* topics -> ClickHouse) until SIGTERM/SIGINT',
    load: async () => (await import('./commands/monitoring.ts')).monitoringRunCommand,
  },
};
