import { LocalKafkaCluster } from '../../dev/kafka-cluster.ts';
import type { Command } from '../command.ts';
import { DEFAULT_KAFKA_DIR, dataDirFrom, dataDirOption } from '../dev-options.ts';
import { seconds, showPath } from '../format.ts';
import { requiredIntOption } from '../options.ts';

/** Fault-injection actions on one node of the local cluster. */
export type NodeAction = 'kill' | 'pause' | 'resume' | 'stop-node' | 'start-node';

const act: Record<
  NodeAction,
  { done: string; apply: (c: LocalKafkaCluster, id: number) => Promise<void> | void }
> = {
  kill: { done: 'killed (SIGKILL)', apply: (c, id) => c.killNode(id) },
  pause: { done: 'paused (SIGSTOP)', apply: (c, id) => c.pauseNode(id) },
  resume: { done: 'resumed (SIGCONT)', apply: (c, id) => c.resumeNode(id) },
  'stop-node': { done: 'stopped', apply: (c, id) => c.stopNode(id) },
  'start-node': { done: 'started and back in sync', apply: (c, id) => c.startNode(id) },
};

export function kafkaNodeCommand(action: NodeAction): Command {
  return {
    usage: '--node N [--data-dir D]',
    options: { ...dataDirOption, node: { type: 'string', short: 'n' } },
    async run({ values, io }) {
      const id = requiredIntOption(values, 'node', 1, 3);
      const dataDir = dataDirFrom(values, DEFAULT_KAFKA_DIR);
      // A killed node is started again even when it was the only one (nothing else runs then).
      const cluster = LocalKafkaCluster.attach(dataDir, { includeDown: action === 'start-node' });
      if (!cluster) throw new Error(`Kafka in ${showPath(dataDir)} is not running`);
      if (!cluster.nodeIds().includes(id)) {
        throw new Error(`no node ${id}: the cluster has nodes ${cluster.nodeIds().join(', ')}`);
      }
      const started = Date.now();
      await act[action].apply(cluster, id);
      io.out(`kafka node ${id} ${act[action].done} (${seconds(Date.now() - started)})`);
    },
  };
}
