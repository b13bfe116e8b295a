import type { LocalClickHouse } from '../../dev/clickhouse-server.ts';
import type { LocalKafkaCluster } from '../../dev/kafka-cluster.ts';
import type { NetworkNamespace } from '../../dev/network-namespace.ts';
import type { InjectedFault, PlannedFault } from './faults.ts';
import type { PipelineProcesses } from './processes.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Past the config's session timeout (6 s): the stopped stage's partitions move to nobody, then back. */
const SIGSTOP_MS = 10_000;
/** How long the cut stage is cut off: past the session timeout too, as a cable pulled for a while. */
const CUT_MS = 12_000;
/** At least this long between the end of one fault and the next, so that each meets a pipeline at work. */
const FAULT_GAP_MS = 2_000;
/** How long a killed broker or ClickHouse stays down. */
const DOWN_MS = 3_000;

export interface FaultTargets {
  readonly processes: PipelineProcesses;
  readonly cluster: LocalKafkaCluster;
  readonly clickhouse: LocalClickHouse;
  readonly namespace: NetworkNamespace | undefined;
  readonly log: (line: string) => void;
}

/** Runs the schedule, each fault at its time after `from`; a fault whose action failed says so. */
export async function injectAll(
  planned: readonly PlannedFault[],
  from: number,
  t: FaultTargets,
): Promise<InjectedFault[]> {
  const done: InjectedFault[] = [];
  let lastEnd = 0;
  for (const f of planned) {
    const wait = Math.max(from + f.atMs, lastEnd + FAULT_GAP_MS) - Date.now();
    if (wait > 0) await sleep(wait);
    const injectedAt = Date.now();
    t.log(`fault ${f.kind} ${f.target} at +${((injectedAt - from) / 1000).toFixed(1)} s`);
    let error: string | undefined;
    try {
      await inject(f, t);
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    lastEnd = Date.now();
    done.push({
      ...f,
      atActualMs: injectedAt - from,
      injectedAt,
      restoredAt: lastEnd,
      ...(error === undefined ? {} : { error }),
    });
  }
  return done;
}

async function inject(f: PlannedFault, t: FaultTargets): Promise<void> {
  switch (f.kind) {
    case 'stage-kill-9':
    case 'agent-kill-9':
      await t.processes.restart(f.target, 'SIGKILL');
      return;
    case 'stage-sigstop':
      t.processes.signal(f.target, 'SIGSTOP');
      await sleep(SIGSTOP_MS);
      t.processes.signal(f.target, 'SIGCONT');
      return;
    case 'broker-kill-9': {
      const [node] = t.cluster.nodeIds();
      if (node === undefined) throw new Error('no broker to kill');
      await t.cluster.killNode(node);
      await sleep(DOWN_MS);
      await t.cluster.startNode(node);
      return;
    }
    case 'network-cut':
      if (!t.namespace) throw new Error('no network namespace to cut');
      t.namespace.cut();
      try {
        await sleep(CUT_MS);
      } finally {
        t.namespace.heal();
      }
      return;
    case 'clickhouse-kill-9':
      await t.clickhouse.kill();
      await sleep(DOWN_MS);
      await t.clickhouse.restart();
      return;
  }
}
